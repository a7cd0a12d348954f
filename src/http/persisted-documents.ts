import { readFileSync } from 'node:fs';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { GraphQLError } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';

/** `allow`: ids and documents both run. `require`: only documents in the manifest run. */
export type PersistedOperationsMode = 'off' | 'allow' | 'require';

/** A manifest: document id → document text, as codegen's client preset writes it. */
export type PersistedDocuments = ReadonlyMap<string, string>;

/**
 * Reads a persisted-documents manifest (`{ "<id>": "<document>" }`, codegen's
 * `persisted-documents.json`). Throws a one-line error when the file is unusable.
 */
export function loadPersistedDocuments(path: string): PersistedDocuments {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read persisted operations from ${path}: ${(error as Error).message}`);
  }
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    throw new Error(`${path} must be a JSON object of document id to document text`);
  }
  const documents = new Map<string, string>();
  for (const [id, document] of Object.entries(manifest)) {
    if (typeof document !== 'string') throw new Error(`${path}: document ${id} is not a string`);
    documents.set(id, document);
  }
  return documents;
}

/**
 * Trusted documents: a client sends `{ "documentId": "<id>" }` (or the APQ-style
 * `extensions.persistedQuery.sha256Hash`) instead of the document text.
 */
export function usePersistedDocuments(mode: 'allow' | 'require', documents: PersistedDocuments): Plugin {
  return usePersistedOperations({
    allowArbitraryOperations: mode === 'allow',
    extractPersistedOperationId: (params: GraphQLParams) => idOf(params) ?? null,
    // codegen prefixes ids with the algorithm; APQ clients send the bare sha256 hex.
    getPersistedOperation: (id) => documents.get(id) ?? documents.get(`sha256:${id}`) ?? null,
    customErrors: {
      notFound: {
        message: 'No persisted operation has this id.',
        extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 404 } },
      },
      // Only in require mode: document text, with or without an id beside it.
      persistedQueryOnly: ({ params }) =>
        operationRequired(
          hasId(params)
            ? 'This gateway runs only persisted operations: send the documentId without the query text.'
            : 'This gateway runs only persisted operations: send a documentId instead of the query text.',
        ),
      keyNotFound: () =>
        operationRequired(
          mode === 'require'
            ? 'This gateway runs only persisted operations: send a documentId.'
            : 'Send a query or a documentId.',
        ),
    },
  });
}

/** The id a request carries: `documentId` (body or GET query string) or APQ's sha256Hash. */
function idOf(params: GraphQLParams & { documentId?: unknown }): string | undefined {
  if (typeof params.documentId === 'string') return params.documentId;
  const hash = (params.extensions?.persistedQuery as { sha256Hash?: unknown } | undefined)?.sha256Hash;
  return typeof hash === 'string' ? hash : undefined;
}

function hasId(params: GraphQLParams): boolean {
  return idOf(params) !== undefined;
}

function operationRequired(message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: 'PERSISTED_OPERATION_REQUIRED', http: { status: 403 } },
  });
}
