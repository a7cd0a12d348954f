import type { IncomingMessage } from 'node:http';
import type { ExecutionResult } from 'graphql';
import type { CompiledQuery } from 'graphql-jit';
import type { GraphQLParams } from 'graphql-yoga';
import type { Plan } from '../execution/plan.ts';
import type { Context } from '../schema/context.ts';

/**
 * What Yoga learned by running a document successfully, kept so the fast lane can run it again
 * without Yoga: the document parsed, passed validation and every document-level limit (tokens,
 * depth, aliases, directives, introspection and persisted-document rules), and graphql-jit
 * compiled it. What depends on the request (the key, variables, cost, the caller) is still checked
 * per request.
 */
export interface PreparedOperation {
  readonly compiled: CompiledQuery;
  /**
   * The operation compiled into upstream calls and answer bytes (execution/plan.ts), when every
   * field it selects can be planned and plans are on; it hands anything unusual to `compiled`.
   */
  readonly plan: Plan | undefined;
  readonly operationType: 'query' | 'mutation' | 'subscription';
  /** The operation's own name in the document, for logs and metrics; undefined when anonymous. */
  readonly operationName: string | undefined;
}

/**
 * What the fast lane tells Yoga about a request it hands over, carried in Yoga's server context
 * (`lane`, the third argument of Yoga's node handler): one typed object per handed-over request,
 * read where Yoga needs it, instead of maps keyed by request that every lane had to consult.
 */
export interface HandOff {
  /**
   * The fast lane could serve this request next time: Yoga prepares its operation under these keys
   * once it has answered without errors, and learns the answer's headers.
   */
  toPrepare?: { operation: string; headers: string };
  /**
   * The fast lane executed it, and the result is not the plain case (it has errors): Yoga answers
   * from this result and context, so nothing runs upstream twice.
   */
  executed?: { context: Context; result: ExecutionResult };
  /** The GraphQL parameters the fast lane read from the body: Yoga's parser takes them as they are. */
  parsed?: GraphQLParams;
}

/** Yoga's server context under the edge: node:http's request, and what the fast lane handed over. */
export interface LaneContext {
  req?: IncomingMessage;
  lane?: HandOff;
}

/** What the edge and Yoga share across requests. */
export interface Lanes {
  /** Prepared operations by `operationKey`. */
  readonly prepared: Lru<PreparedOperation>;
  /**
   * The headers Yoga sends with a successful answer, by `headersKey` (the request headers they
   * depend on: Accept picks the content type, Origin the CORS headers, Accept-Encoding the
   * compression), less the ones each answer sets for itself (content-length, content-encoding,
   * x-request-id, deprecation, sunset). Learned from Yoga's own
   * answers, so the fast lane never negotiates anything itself.
   */
  readonly headers: Lru<readonly string[]>;
  /**
   * GraphQL requests answered by each lane, for /metrics and the differential tests; `planned` is
   * the part of `fast` a compiled plan answered without GraphQL execution.
   */
  readonly served: { fast: number; yoga: number; planned: number };
  /** Whether prepared operations get compiled plans (FAST_LANE=on) or only compiled execution. */
  readonly planning: boolean;
}

/**
 * Documents longer than this are never prepared. The key holds the document text, so without a
 * bound the cache could hold MAX_PREPARED × the body cap; real operations are a few hundred bytes.
 */
export const MAX_PREPARED_DOCUMENT_LENGTH = 8192;
/** Prepared operations kept; the least recently served go first. ~25 KB each (graphql-jit's code). */
const MAX_PREPARED = 512;
/**
 * Header sets kept. Accept and Origin come from callers, so a caller sending endless made-up
 * values only ever evicts older sets (those requests then go to Yoga again), never grows memory.
 */
const MAX_HEADER_SETS = 64;
/** Header values longer than this are not part of a key: such requests simply stay with Yoga. */
const MAX_KEY_HEADER_LENGTH = 256;

/** A bounded map that forgets the least recently used entry first. */
export interface Lru<T> {
  get(key: string): T | undefined;
  set(key: string, value: T): void;
  readonly size: number;
}

/**
 * A hit only stamps the entry: it is read on every request the fast lane serves, and re-inserting
 * it (delete, then set, to move it to the end of the Map's order) made the table rebuild itself
 * every few thousand hits. The scan for the stalest entry is paid only when a new key overflows
 * the bound, next to the document's parse, validation and compilation.
 */
export function createLru<T>(max: number): Lru<T> {
  const entries = new Map<string, { value: T; used: number }>();
  let clock = 0;
  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      entry.used = ++clock;
      return entry.value;
    },
    set(key, value) {
      const entry = entries.get(key);
      if (entry !== undefined) {
        entry.value = value;
        entry.used = ++clock;
        return;
      }
      entries.set(key, { value, used: ++clock });
      if (entries.size <= max) return;
      let stalest: string | undefined;
      let oldest = Number.POSITIVE_INFINITY;
      for (const [candidate, { used }] of entries) {
        if (used < oldest) {
          oldest = used;
          stalest = candidate;
        }
      }
      if (stalest !== undefined) entries.delete(stalest);
    },
    get size() {
      return entries.size;
    },
  };
}

export function createLanes(planning = true, maxPrepared = MAX_PREPARED): Lanes {
  return {
    planning,
    prepared: createLru(maxPrepared),
    headers: createLru(MAX_HEADER_SETS),
    served: { fast: 0, yoga: 0, planned: 0 },
  };
}

/** Headers each answer sets for itself; every other header of a successful answer is learned. */
export const PER_ANSWER_HEADERS: ReadonlySet<string> = new Set([
  'cache-control',
  'content-length',
  'content-encoding',
  'x-request-id',
  'deprecation',
  'sunset',
]);

/**
 * The key of the request headers a successful answer's headers depend on, or undefined when a
 * value is too long to be a key (or repeated).
 */
export function headersKey(accept: unknown, origin: unknown, acceptEncoding: unknown): string | undefined {
  let key = '';
  for (const value of [accept, origin, acceptEncoding]) {
    if (value === undefined) key += '\u0001\u0000';
    else if (typeof value === 'string' && value.length <= MAX_KEY_HEADER_LENGTH) key += `=${value}\u0000`;
    else return undefined;
  }
  return key;
}

/**
 * The key of the operation a request body selects: the document (its text, its persisted id, or
 * its APQ hash) and the operation name, `null`/absent kept apart from the empty string as
 * graphql-js does. Ids and hashes are kept apart (a documentId names only manifest documents, a
 * hash also registered ones). Undefined when the document is too long to be prepared.
 */
export function operationKey(
  query: string | undefined,
  documentId: string | undefined,
  operationName: string | null | undefined,
  hash?: string,
): string | undefined {
  const name = operationName == null ? '\u0001' : `=${operationName}`;
  if (hash !== undefined) {
    return hash.length > MAX_PREPARED_DOCUMENT_LENGTH ? undefined : `h\u0000${name}\u0000${hash}`;
  }
  if (documentId !== undefined) {
    return documentId.length > MAX_PREPARED_DOCUMENT_LENGTH
      ? undefined
      : `id\u0000${name}\u0000${documentId}`;
  }
  if (query === undefined || query.length > MAX_PREPARED_DOCUMENT_LENGTH) return undefined;
  return `q\u0000${name}\u0000${query}`;
}
