import type { ExecutionResult } from 'graphql';
import type { SharedRequestContext } from '../policy/hand-off.ts';

/** Yoga's fetch, as the edge holds it: the server of record for every operation. */
export type YogaFetch = (
  request: Request,
  serverContext: SharedRequestContext,
) => Promise<Response> | Response;

/** What one operation carries from graphql-ws to Yoga. */
export interface Forward {
  payload: { query?: string; variables?: unknown; operationName?: unknown; extensions?: unknown };
  authorization: string | undefined;
  req: SharedRequestContext['req'];
}

/**
 * graphql-ws requires `query` text in every `subscribe` payload, so an operation sent by its
 * trusted document's id or its APQ hash alone would close the socket (4400). Such a payload is
 * given an empty `query` to pass that check; `relay` leaves it out again, so Yoga sees the
 * parameters the client sent, as over HTTP.
 */
export function withQueryText(key: string, value: unknown): unknown {
  if (key !== 'payload' || typeof value !== 'object' || value === null || 'query' in value) return value;
  const { documentId, extensions } = value as Forward['payload'] & { documentId?: unknown };
  const persisted = (extensions as { persistedQuery?: unknown } | undefined)?.persistedQuery;
  return documentId !== undefined || persisted !== undefined ? { ...value, query: '' } : value;
}

/** The payload as the client sent it: without the empty `query` withQueryText gave it. */
function sentPayload(payload: Forward['payload']): Forward['payload'] {
  if (payload.query !== '') return payload;
  const { query: _empty, ...sent } = payload;
  return sent;
}

/** An operation's results, as graphql-ws reads them: `return()` is its client's `complete`. */
export interface Stoppable extends AsyncIterableIterator<ExecutionResult> {
  return(): Promise<IteratorResult<ExecutionResult>>;
}

/**
 * `events`, with a `return()` that stops them at once. graphql-ws calls `return()` when the client
 * sends `complete` or the socket closes; an async generator's own `return()` waits until the
 * generator next yields, which for a live list is its next change, perhaps never: the watch, its
 * polls and its place under the caps would be held by nobody. Aborting the request to Yoga ends
 * the subscription there, and the relay with it.
 */
export function stoppable(events: AsyncGenerator<ExecutionResult>, abort: AbortController): Stoppable {
  return {
    next: () => events.next(),
    return: () => {
      abort.abort();
      return Promise.resolve({ done: true, value: undefined });
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * One operation through Yoga over SSE, its events relayed as results; `signal` (the client is done)
 * aborts the request, which ends the subscription, and the relay ends quietly.
 */
export async function* relay(
  yoga: YogaFetch,
  forward: Forward,
  signal: AbortSignal,
): AsyncGenerator<ExecutionResult> {
  try {
    const response = await yoga(
      new Request('http://gateway/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...(forward.authorization ? { authorization: forward.authorization } : {}),
        },
        body: JSON.stringify(sentPayload(forward.payload)),
        signal,
      }),
      { req: forward.req, sharedReq: true },
    );
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      yield JSON.parse(await response.text()) as ExecutionResult;
      return;
    }
    yield* sseEvents(response, signal);
  } catch (error) {
    // The client is gone or done: nobody reads an error now.
    if (!signal.aborted) throw error;
  }
}

/** The `next` events of an SSE answer, as they arrive. */
async function* sseEvents(response: Response, signal: AbortSignal): AsyncGenerator<ExecutionResult> {
  const reader = response.body?.getReader();
  if (!reader) return;
  // A read waiting for the next change must end when the client is done, whatever Yoga does.
  const cancel = () => void reader.cancel().catch(() => {});
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const decoder = new TextDecoder();
    let buffer = '';
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      buffer += decoder.decode(read.value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!block.startsWith('event: next')) {
          if (block.startsWith('event: complete')) return;
          continue;
        }
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        yield JSON.parse(data) as ExecutionResult;
      }
    }
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}
