import type { CompiledQuery } from 'graphql-jit';
import type { Plan } from '../execution/plan.ts';
import { createLru, type Lru, type LruBounds } from '../stores/lru.ts';
import { COST_HEADERS } from './cost.ts';

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
  /** Its estimated cost with these variables (execution/cost.ts), as Yoga's lane prices it. */
  readonly price: (variables: Record<string, unknown>) => number | undefined;
  /** The actual cost of an answer's `data` (execution/cost.ts), as Yoga's lane prices it. */
  readonly actual: (data: unknown, variables: Record<string, unknown>) => number | undefined;
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
   * the part of `fast` a compiled plan answered without GraphQL execution; `oneCall`, the requests
   * the one-call path took (fast-lane/one-call.ts), answered there or handed on.
   */
  readonly served: { fast: number; yoga: number; planned: number; oneCall: number };
  /** Whether prepared operations get compiled plans (PLANS=on) or only compiled execution. */
  readonly planning: boolean;
  /**
   * Plans by document shape (execution/shape.ts), for documents sent as text the fast lane has not
   * seen: a client that writes a new alias into each request sends a new text every time. Undefined
   * when plans are off, or when trusted documents are required (only the manifest's ids run there:
   * no text may stand for one by its shape).
   */
  readonly shapes: Shapes | undefined;
}

export interface Shapes {
  /** The plan of each shape by `shapeKey`, made when a document of that shape ran the second time. */
  readonly planned: Lru<ShapedOperation>;
  /**
   * Shapes that ran once and have no plan yet: as graphql-jit compiles a text on its second run,
   * a shape is planned on its second sight, so a document seen once costs no plan.
   */
  readonly seen: Lru<true>;
}

/** A plan found by shape, and the response names of the document it was made from. */
export interface ShapedOperation {
  readonly plan: Plan;
  readonly operationType: 'query' | 'mutation';
  /** The operation's own name in the document, for logs and metrics; undefined when anonymous. */
  readonly operationName: string | undefined;
  /** DocumentShape.names of the planned document: the plan's response keys, in order. */
  readonly names: readonly string[];
}

/**
 * Documents longer than this are never prepared: the key holds the document text, and real
 * operations are a few hundred bytes.
 */
export const MAX_PREPARED_DOCUMENT_LENGTH = 8192;
/** Prepared operations kept; the least recently served go first. */
export const PREPARED_CACHE: LruBounds = { entries: 512, bytes: 16 * 1024 * 1024 };
/**
 * What a prepared operation weighs on the heap, by its key (which holds the document's text):
 * graphql-jit's code (~16 KiB for the smallest operation) and, per character, the document's
 * parse, the code per field and the plan.
 */
const preparedBytes = (key: string): number => 16 * 1024 + 300 * key.length;
/** Plans kept by shape: each holds the parse of the document it was made from. */
export const PLANNED_SHAPES: LruBounds = { entries: 512, bytes: 8 * 1024 * 1024 };
const plannedBytes = (key: string): number => 4096 + 200 * key.length;
/** Shapes seen once: the key alone. */
export const SEEN_SHAPES: LruBounds = { entries: 512, bytes: 1024 * 1024 };
/** A kept key with nothing else: its characters (two bytes each at most) and its entry. */
export const keyBytes = (key: string): number => 64 + 2 * key.length;
/**
 * Header sets kept. Accept and Origin come from callers, so a caller sending endless made-up
 * values only ever evicts older sets (those requests then go to Yoga again), never grows memory.
 */
const MAX_HEADER_SETS = 64;
/** Header values longer than this are not part of a key: such requests simply stay with Yoga. */
const MAX_KEY_HEADER_LENGTH = 256;

export function createLanes(planning = true, maxPrepared = PREPARED_CACHE.entries, byShape = true): Lanes {
  const bounded = (bounds: LruBounds): LruBounds => ({ ...bounds, entries: maxPrepared });
  return {
    planning,
    prepared: createLru(bounded(PREPARED_CACHE), preparedBytes),
    shapes:
      planning && byShape
        ? {
            planned: createLru(bounded(PLANNED_SHAPES), plannedBytes),
            seen: createLru(bounded(SEEN_SHAPES), keyBytes),
          }
        : undefined,
    headers: createLru(MAX_HEADER_SETS),
    served: { fast: 0, yoga: 0, planned: 0, oneCall: 0 },
  };
}

/** Headers each answer sets for itself; every other header of a successful answer is learned. */
export const PER_ANSWER_HEADERS: ReadonlySet<string> = new Set([
  'cache-control',
  'etag',
  'content-length',
  'content-encoding',
  'x-request-id',
  'deprecation',
  'sunset',
  ...Object.values(COST_HEADERS),
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
  const name = nameKey(operationName);
  if (hash !== undefined) {
    return hash.length > MAX_PREPARED_DOCUMENT_LENGTH ? undefined : `h\u0000${name}\u0000${hash}`;
  }
  if (documentId !== undefined) {
    return documentId.length > MAX_PREPARED_DOCUMENT_LENGTH
      ? undefined
      : `id\u0000${name}\u0000${documentId}`;
  }
  if (query === undefined || query.length > MAX_PREPARED_DOCUMENT_LENGTH) return undefined;
  return `${BY_TEXT}${name}\u0000${query}`;
}

/** How an operation key begins when it names the document by its text. */
const BY_TEXT = 'q\u0000';

/** The operation name asked for, `null`/absent kept apart from the empty string as graphql-js does. */
const nameKey = (operationName: string | null | undefined): string =>
  operationName == null ? '\u0001' : `=${operationName}`;

/**
 * The key of a prepared operation's shape (`Lanes.shapes`): the operation name asked for, kept
 * apart as in `operationKey`, and the document's shape.
 */
export function shapeKey(operationName: string | null | undefined, shape: string): string {
  return `${nameKey(operationName)}\u0000${shape}`;
}

/** Whether an operation key names a document by its text (not by a persisted id or hash). */
export const isText = (key: string): boolean => key.startsWith(BY_TEXT);
