/**
 * A GraphQL-over-SSE subscriber as a browser's EventSource or graphql-sse would be: a POST with
 * `Accept: text/event-stream`, its events read as they arrive.
 */
export interface SseSubscription {
  /** The `next` events' payloads so far, in order. */
  readonly events: Array<{
    data?: unknown;
    errors?: Array<{ message: string; extensions?: { code?: string } }>;
  }>;
  /** Whether the server sent `complete`, or the stream ended. */
  readonly ended: boolean;
  readonly status: number;
  /** The response's headers. */
  readonly headers: Headers;
  /** Resolves once `count` events have arrived (rejects after `timeoutMs`). */
  waitForEvents(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves once the stream has ended. */
  waitForEnd(timeoutMs?: number): Promise<void>;
  close(): void;
}

export async function subscribeSse(
  url: string,
  body: { query?: string; documentId?: string; variables?: Record<string, unknown> },
  authorization?: string,
): Promise<SseSubscription> {
  const abort = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  const events: SseSubscription['events'] = [];
  let ended = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      const reader = response.body?.getReader();
      for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
        const chunk = read.value;
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (\w+)/m.exec(block)?.[1];
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          if (event === 'next') events.push(JSON.parse(data));
          else if (event === 'complete') ended = true;
          wake();
        }
      }
    } catch {
      // Aborted by close(), or the connection dropped: either way the stream is over.
    }
    ended = true;
    wake();
  })();
  const until = (done: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (done()) return resolve();
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${what} not within ${timeoutMs} ms (${events.length} events, ended: ${ended})`));
      }, timeoutMs);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
    });
  return {
    events,
    get ended() {
      return ended;
    },
    status: response.status,
    headers: response.headers,
    waitForEvents: (count, timeoutMs = 5000) =>
      until(() => events.length >= count, timeoutMs, `${count} events`),
    waitForEnd: (timeoutMs = 5000) => until(() => ended, timeoutMs, 'the end of the stream'),
    close: () => abort.abort(),
  };
}
