import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';

export interface GraphQLResponse<TData> {
  status: number;
  data?: TData | null;
  errors?: Array<{ message: string; path?: Array<string | number>; extensions?: Record<string, unknown> }>;
  /** The raw body text, for leak checks. */
  text: string;
}

/** Posts a typed operation over real HTTP, as a GraphQL client would, and returns the whole answer. */
export async function execute<TData, TVariables>(
  url: string,
  document: TypedDocumentNode<TData, TVariables>,
  variables: TVariables,
  authorization?: string,
): Promise<GraphQLResponse<TData>> {
  return postJson(url, { query: print(document), variables }, authorization);
}

/** Posts any JSON body (for untyped or malformed operations). */
export async function postJson<TData = unknown>(
  url: string,
  body: unknown,
  authorization?: string,
): Promise<GraphQLResponse<TData>> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
  };
  if (authorization !== undefined) headers.authorization = authorization;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, text, ...JSON.parse(text) };
}
