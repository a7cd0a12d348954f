import type { IncomingMessage } from 'node:http';
import type { ExecutionResult } from 'graphql';
import type { CompiledQuery } from 'graphql-jit';
import type { Context } from '../context.ts';

/**
 * What Yoga learned by running a document successfully, kept so the fast lane can run it again
 * without Yoga: the document parsed, passed validation and every document-level limit (tokens,
 * depth, aliases, directives, introspection and persisted-document rules), and graphql-jit
 * compiled it. What depends on the request (the key, variables, cost, the caller) is still checked
 * per request.
 */
export interface PreparedOperation {
  readonly compiled: CompiledQuery;
  readonly operationType: 'query' | 'mutation' | 'subscription';
  /** The operation's own name in the document, for logs and metrics; undefined when anonymous. */
  readonly operationName: string | undefined;
}

/**
 * How the edge and Yoga exchange what they know about requests. The edge reads each request body
 * once; when it hands a request to Yoga, it says why through these maps.
 */
export interface Lanes {
  /** Prepared operations by `operationKey`. */
  readonly prepared: PreparedOperationCache;
  /**
   * Requests the fast lane could serve next time, handed to Yoga unexecuted: Yoga prepares the
   * operation under this key once it has run it without errors.
   */
  readonly toPrepare: WeakMap<IncomingMessage, string>;
  /**
   * Requests the fast lane has executed but whose result is not the plain case (it has errors):
   * Yoga answers them from this result and context, so nothing runs upstream twice.
   */
  readonly executed: WeakMap<IncomingMessage, { context: Context; result: ExecutionResult }>;
  /** GraphQL requests answered by each lane, for /metrics and the differential tests. */
  readonly served: { fast: number; yoga: number };
}

/**
 * Documents longer than this are never prepared. The key holds the document text, so without a
 * bound the cache could hold MAX_PREPARED × the body cap; real operations are a few hundred bytes.
 */
export const MAX_PREPARED_DOCUMENT_LENGTH = 8192;
/** Prepared operations kept; the least recently served go first. ~25 KB each (graphql-jit's code). */
const MAX_PREPARED = 512;

/** A bounded LRU of prepared operations. */
export interface PreparedOperationCache {
  get(key: string): PreparedOperation | undefined;
  set(key: string, operation: PreparedOperation): void;
  readonly size: number;
}

export function createLanes(max = MAX_PREPARED): Lanes {
  const entries = new Map<string, PreparedOperation>();
  return {
    prepared: {
      get(key) {
        const operation = entries.get(key);
        if (operation === undefined) return undefined;
        // Map keeps insertion order: re-inserting makes this the most recently used.
        entries.delete(key);
        entries.set(key, operation);
        return operation;
      },
      set(key, operation) {
        entries.delete(key);
        entries.set(key, operation);
        if (entries.size > max) entries.delete(entries.keys().next().value as string);
      },
      get size() {
        return entries.size;
      },
    },
    toPrepare: new WeakMap(),
    executed: new WeakMap(),
    served: { fast: 0, yoga: 0 },
  };
}

/**
 * The key of the operation a request body selects: the document (its text, or its persisted id)
 * and the operation name, `null`/absent kept apart from the empty string as graphql-js does.
 * Undefined when the document is too long to be prepared.
 */
export function operationKey(
  query: string | undefined,
  documentId: string | undefined,
  operationName: string | null | undefined,
): string | undefined {
  const name = operationName == null ? '\u0001' : `=${operationName}`;
  if (documentId !== undefined) {
    return documentId.length > MAX_PREPARED_DOCUMENT_LENGTH
      ? undefined
      : `id\u0000${name}\u0000${documentId}`;
  }
  if (query === undefined || query.length > MAX_PREPARED_DOCUMENT_LENGTH) return undefined;
  return `q\u0000${name}\u0000${query}`;
}
