import type { GraphQLParams } from 'graphql-yoga';
import { CODES } from '../codes.ts';
import { requestError } from '../schema/errors.ts';

/** GraphQL-over-HTTP's parameters in a GET request's query string. */
export interface QueryParams extends GraphQLParams {
  /** A persisted document's id (GraphQL-over-HTTP's name for it). */
  documentId?: string;
}

/** The GraphQL parameters of a GET URL; throws BAD_REQUEST for JSON parameters that do not parse. */
export function parseQueryParams(url: string): QueryParams {
  const start = url.indexOf('?');
  const search = new URLSearchParams(start === -1 ? '' : url.slice(start + 1));
  const text = (name: string) => search.get(name) || undefined;
  const params: QueryParams = {};
  const query = text('query');
  if (query !== undefined) params.query = query;
  const operationName = text('operationName');
  if (operationName !== undefined) params.operationName = operationName;
  const documentId = text('documentId');
  if (documentId !== undefined) params.documentId = documentId;
  const variables = json(search, 'variables');
  if (variables !== undefined) params.variables = variables as Record<string, unknown>;
  const extensions = json(search, 'extensions');
  if (extensions !== undefined) params.extensions = extensions as Record<string, unknown>;
  return params;
}

function json(search: URLSearchParams, name: 'variables' | 'extensions'): unknown {
  const text = search.get(name);
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // The parameter is not echoed: it is the caller's own text, and may be long.
    throw requestError(CODES.BAD_REQUEST, `The ${name} parameter is not valid JSON.`);
  }
}
