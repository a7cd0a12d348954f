import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { GraphQLError } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { CODES } from '../../codes.ts';
import { requestError } from '../../schema/errors.ts';
import type { DocumentStore } from '../../stores/registered-documents.ts';

/**
 * Trusted documents. `off`: no manifest. `allow`: manifest ids and document text both run.
 * `require`: only documents in the manifest run.
 */
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

export interface PersistedDocumentsOptions {
  mode: PersistedOperationsMode;
  /** The manifest; required unless `mode` is off. */
  documents?: PersistedDocuments;
  /** Automatic persisted queries: where registered documents live; undefined = APQ off. Never used in `require`. */
  store?: DocumentStore;
}

/** What an APQ hash looks like: SHA-256, lowercase hex, as Apollo's and urql's clients send it. */
const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Trusted documents and automatic persisted queries (APQ), in one `onParams` hook that decides
 * which document a request runs:
 * - `documentId` (GraphQL over HTTP) names a manifest document;
 * - `extensions.persistedQuery.sha256Hash` (Apollo's APQ protocol) names a manifest document, or
 *   one registered earlier: sent beside its text, the text is checked to be its SHA-256 and is
 *   registered once it has parsed, validated and passed every limit (so the store never holds a
 *   document that cannot run). A registered document is then run exactly as if its text had been
 *   sent: validated, limited and priced again, with no privilege.
 * Errors are worded as the clients that speak the protocol act on them: `PersistedQueryNotFound`
 * makes Apollo's `PersistedQueryLink` and urql's `persistedExchange` send the document again.
 */
export function usePersistedDocuments(options: PersistedDocumentsOptions): Plugin {
  const { mode, documents } = options;
  const store = mode === 'require' ? undefined : options.store;
  const toRegister = new WeakMap<Request, { hash: string; document: string }>();
  // codegen prefixes ids with the algorithm; APQ clients send the bare sha256 hex.
  const fromManifest = (id: string) => documents?.get(id) ?? documents?.get(`sha256:${id}`);
  return {
    onParams({ params, setParams, request }) {
      // Yoga refuses a query that is not a string; it must not be replaced by a document here.
      if (params.query != null && typeof params.query !== 'string') return;
      const asked = askedFor(params);
      const { id, hash, text } = asked;
      const run = (query: string) => setParams(withQuery(params, query));
      if (mode === 'require') return run(requiredDocument(asked, fromManifest));
      const key = id ?? hash;
      if (key === undefined) {
        if (mode === 'allow' && text === undefined) throw operationRequired('Send a query or a documentId.');
        return;
      }
      const listed = fromManifest(key);
      if (listed !== undefined) {
        if (text !== undefined && text !== listed) {
          throw hashMismatch(
            'The query text is not the persisted document this id names: send the id alone, or the text alone.',
          );
        }
        return run(listed);
      }
      // documentId names manifest documents only.
      if (id !== undefined || hash === undefined) throw notFound(true);
      if (store === undefined) throw notSupported();
      if (text !== undefined) {
        if (!SHA256_HEX.test(hash) || sha256(text) !== hash) {
          throw hashMismatch(
            'extensions.persistedQuery.sha256Hash is not the SHA-256 of the query text; nothing was registered.',
          );
        }
        toRegister.set(request, { hash, document: text });
        return;
      }
      if (!SHA256_HEX.test(hash)) throw notFound(false);
      return store.get(hash).then((document) => {
        if (document === undefined) throw notFound(false);
        run(document);
      });
    },
    // Reached only by a document that parsed, validated and passed every document limit.
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      const registration = request && toRegister.get(request);
      if (!registration || !store) return;
      toRegister.delete(request);
      void store.set(registration.hash, registration.document);
    },
  };
}

/** What a request names: a manifest document (`documentId`), an APQ hash, the document's text. */
interface Asked {
  id: string | undefined;
  hash: string | undefined;
  /** The query text, when it is not empty. */
  text: string | undefined;
}

/** Reads what the request names; BAD_REQUEST when its documentId and APQ hash disagree. */
function askedFor(params: GraphQLParams): Asked {
  const documentId = (params as { documentId?: unknown }).documentId;
  const id = typeof documentId === 'string' ? documentId : undefined;
  const hash = persistedQueryHash(params.extensions);
  if (id !== undefined && hash !== undefined && id !== hash) {
    throw requestError(
      CODES.BAD_REQUEST,
      'documentId and extensions.persistedQuery.sha256Hash name different documents: send one.',
    );
  }
  const text = typeof params.query === 'string' && params.query !== '' ? params.query : undefined;
  return { id, hash, text };
}

/** The request's params, with `query` as the document it runs. */
function withQuery(params: GraphQLParams, query: string): GraphQLParams {
  return {
    query,
    ...(params.operationName == null ? {} : { operationName: params.operationName }),
    ...(params.variables == null ? {} : { variables: params.variables }),
    ...(params.extensions == null ? {} : { extensions: params.extensions }),
  };
}

/** In `require` mode: the manifest document the request names, and nothing else. */
function requiredDocument(
  { id, hash, text }: Asked,
  fromManifest: (id: string) => string | undefined,
): string {
  const key = id ?? hash;
  if (text !== undefined) {
    throw operationRequired(
      key !== undefined
        ? 'This gateway runs only persisted operations: send the documentId without the query text.'
        : 'This gateway runs only persisted operations: send a documentId instead of the query text.',
    );
  }
  if (key === undefined)
    throw operationRequired('This gateway runs only persisted operations: send a documentId.');
  const document = fromManifest(key);
  if (document === undefined) throw notFound(id !== undefined);
  return document;
}

/** `extensions.persistedQuery.sha256Hash`, undefined without a persistedQuery; BAD_REQUEST when malformed. */
function persistedQueryHash(extensions: GraphQLParams['extensions']): string | undefined {
  const persisted = (extensions as Record<string, unknown> | undefined)?.persistedQuery;
  if (persisted === undefined || persisted === null) return undefined;
  const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
  if (typeof persisted !== 'object' || version !== 1 || typeof sha256Hash !== 'string' || sha256Hash === '') {
    throw requestError(
      CODES.BAD_REQUEST,
      'extensions.persistedQuery must be {"version": 1, "sha256Hash": "<sha256 hex of the document>"}.',
    );
  }
  return sha256Hash;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * `PersistedQueryNotFound` is the message urql matches and `PERSISTED_QUERY_NOT_FOUND` the code
 * Apollo matches. 404 for clients that accept application/graphql-response+json; 200 for those that
 * accept only application/json (`spec`), as Apollo Server answers, so no HTTP error handling in
 * between hides the body a client retries on.
 */
function notFound(byId: boolean): GraphQLError {
  return requestError(
    CODES.PERSISTED_QUERY_NOT_FOUND,
    byId ? 'No persisted operation has this id.' : 'PersistedQueryNotFound',
    { http: { spec: true } },
  );
}

/** With APQ off, the protocol's answer: the clients stop sending hashes and send documents. */
function notSupported(): GraphQLError {
  return requestError(CODES.PERSISTED_QUERY_NOT_SUPPORTED, 'PersistedQueryNotSupported', {
    http: { spec: true },
  });
}

function hashMismatch(message: string): GraphQLError {
  return requestError(CODES.PERSISTED_QUERY_HASH_MISMATCH, message);
}

function operationRequired(message: string): GraphQLError {
  return requestError(CODES.PERSISTED_OPERATION_REQUIRED, message);
}
