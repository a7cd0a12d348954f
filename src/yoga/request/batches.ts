import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { LaneContext } from '../../policy/hand-off.ts';
import type { Loaders } from '../../upstream/loaders.ts';
import type { PersistedDocuments } from './persisted-documents.ts';

/** Where one operation stands in its batch: on its context, for the log line and the rate limit. */
export interface BatchEntry {
  readonly index: number;
  readonly size: number;
  /** Whether the entries share the caller's loaders, and so their upstream calls (see `shareOf`). */
  readonly shared: boolean;
}

/** One batched request: its size, whether its entries run one after another, what they share. */
interface Batch {
  readonly size: number;
  readonly ordered: boolean;
  next: number;
  /** Settles when the last entry started so far has finished (ordered batches only). */
  tail: Promise<void>;
  /** The caller's loaders, shared by every entry (see `share`). */
  readonly share: { loaders?: Loaders };
}

export interface Batches {
  plugin: Plugin;
  /** The batch entry a GraphQL context belongs to; undefined for a single request. */
  entryOf(context: object): BatchEntry | undefined;
  /**
   * What the entries of a batched request share: one set of loaders for the caller, so entries
   * asking for the same pet or list make one upstream call. Undefined for a single request, and
   * for an ordered batch: a read after a mutation must see what the mutation changed, not a list
   * an earlier entry received.
   */
  shareOf(request: Request): { loaders?: Loaders } | undefined;
  /** Whether a request is a batch (answered as one JSON array, whatever it accepts). */
  isBatch(request: Request): boolean;
}

/**
 * Batched operations: a POST whose body is a JSON array (yoga/request/body.ts bounds it by
 * MAX_BATCH_OPERATIONS), answered by Yoga as an array of results in the same order, each entry
 * through every plugin as a single request would be (limits, cost, trusted documents, the rate
 * limit, its own log line). Reads run together; a batch that may hold a mutation runs its entries
 * one after another, in order, as a document's mutation fields run: an entry whose document is
 * not in the body (an APQ hash) may be one, so such a batch is ordered too. The entries of a batch
 * of reads share the caller's loaders, released when the answer is written.
 */
export function createBatches(documents?: PersistedDocuments, onBatch?: (size: number) => void): Batches {
  const batches = new WeakMap<Request, Batch>();
  const entries = new WeakMap<object, BatchEntry>();
  const plugin: Plugin = {
    onRequestParse({ request, serverContext }) {
      // A batch the fast lane ran and handed over: its entries go on with the loaders it used.
      const handed = (serverContext as LaneContext).lane?.batch;
      return {
        onRequestParseDone({ requestParserResult }) {
          if (!Array.isArray(requestParserResult)) return;
          onBatch?.(requestParserResult.length);
          batches.set(request, {
            size: requestParserResult.length,
            ordered: requestParserResult.some((params) => mayMutate(params, documents)),
            next: 0,
            tail: Promise.resolve(),
            share: handed?.loaders ? { loaders: handed.loaders } : {},
          });
        },
      };
    },
    // Yoga starts a batch's entries in array order, each through this wrapper before its first hook.
    instrumentation: {
      operation({ context, request }, run) {
        const batch = batches.get(request);
        if (!batch) return run();
        entries.set(context, { index: batch.next++, size: batch.size, shared: !batch.ordered });
        if (!batch.ordered) return run();
        const previous = batch.tail;
        let done = () => {};
        batch.tail = new Promise<void>((resolve) => {
          done = resolve;
        });
        return previous.then(run).finally(done);
      },
    },
    onResponse({ request }) {
      batches.get(request)?.share.loaders?.release();
    },
  };
  return {
    plugin,
    entryOf: (context) => entries.get(context),
    isBatch: (request) => batches.has(request),
    shareOf: (request) => {
      const batch = batches.get(request);
      return batch && !batch.ordered ? batch.share : undefined;
    },
  };
}

/** Whether an entry may be a mutation: its text says so, or its text is not in the body. */
function mayMutate(params: GraphQLParams, documents: PersistedDocuments | undefined): boolean {
  const { query, extensions, documentId } = params as GraphQLParams & { documentId?: unknown };
  const text =
    typeof query === 'string'
      ? query
      : typeof documentId === 'string'
        ? documents?.get(documentId)
        : extensions?.persistedQuery === undefined
          ? ''
          : undefined;
  // A word match: a false positive (a field or string named so) only orders a batch of reads.
  return text === undefined || /\bmutation\b/.test(text);
}
