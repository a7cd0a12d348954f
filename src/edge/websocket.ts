import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type DocumentNode, type ExecutionResult, parse } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import type { SharedRequestContext } from '../policy/hand-off.ts';
import { errorBody } from './error-body.ts';

/** RFC 6455's "going away": a server shutting down. */
const GOING_AWAY = 1001;

/** graphql-ws's subprotocol; the legacy `graphql-ws` (subscriptions-transport-ws) is not served. */
const PROTOCOL = 'graphql-transport-ws';

/**
 * graphql-ws picks `subscribe` or `execute` from the document's operation type; every operation
 * goes to Yoga whole, whatever it is, so the document it sees is this one.
 */
const FORWARDED: DocumentNode = parse('subscription Forwarded { __typename }');

/** Yoga's fetch, as the edge holds it: the server of record for every operation. */
type YogaFetch = (request: Request, serverContext: SharedRequestContext) => Promise<Response> | Response;

export interface WebSocketOptions {
  yoga: YogaFetch;
  /** Largest message accepted (the body cap): a larger one closes the socket (1009). */
  maxPayloadBytes: number;
  /** Browser origins allowed (CORS_ORIGINS); `['*']` for any. */
  origins: readonly string[];
  /** Ping each socket this often: idle sockets stay open through proxies. @default 12000 */
  keepAliveMs?: number;
  /** Where a socket's protocol error (an oversized or malformed frame) is told, as one line. */
  logger: Pick<Logger, 'warn'>;
}

export interface WebSockets {
  /** Node's `upgrade` listener: takes WebSocket requests to /graphql, refuses any other. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Open sockets, for /metrics and the drain. */
  readonly open: number;
  /**
   * Closes every socket with 1001 (going away), so clients reconnect to another instance: once
   * the operations still relaying have sent their last events and `complete` (at most `graceMs`).
   */
  close(graceMs?: number): Promise<void>;
}

/** What one operation carries from graphql-ws to Yoga. */
interface Forward {
  payload: { query?: string; variables?: unknown; operationName?: unknown; extensions?: unknown };
  authorization: string | undefined;
  req: IncomingMessage;
}

/**
 * GraphQL over WebSocket (graphql-ws's protocol) on `/graphql`. A browser cannot set headers on a
 * WebSocket, so the key comes in `connectionParams.authorization` (an `Authorization` header on
 * the upgrade request is taken too). Each operation is sent to Yoga as the same operation over
 * SSE would be, with the key: limits, cost, trusted documents, the rate limit, logs and metrics
 * are the same as for any request, and its events are relayed as they come.
 */
export function createWebSockets(options: WebSocketOptions): WebSockets {
  // Operations relaying now, so the drain can let them send their `complete` before closing.
  const relaying = new Set<Promise<void>>();
  const relayed = (forward: Forward) => {
    let done = () => {};
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    relaying.add(finished);
    const abort = new AbortController();
    const events = (async function* () {
      try {
        yield* relay(options.yoga, forward, abort.signal);
      } finally {
        // However the relay ended (its last event, an error), the request to Yoga ends with it.
        abort.abort();
        relaying.delete(finished);
        done();
      }
    })();
    return stoppable(events, abort);
  };
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes,
    handleProtocols: (protocols) => (protocols.has(PROTOCOL) ? PROTOCOL : false),
  });
  serveGraphqlWs(server, relayed, options.keepAliveMs ?? 12_000);
  return {
    upgrade(req, socket, head) {
      const refusal = refusalOf(req, options.origins);
      if (refusal) {
        socket.end(
          `HTTP/1.1 ${refusal.status}\r\ncontent-type: application/json; charset=utf-8\r\nconnection: close\r\n\r\n${errorBody(refusal.code, refusal.message)}`,
        );
        return;
      }
      // A socket past its upgrade has no HTTP message: the connection cap must not take it for an
      // idle keep-alive connection and close it to make room (edge/connections.ts).
      (socket as Duplex & { longLived?: boolean }).longLived = true;
      server.handleUpgrade(req, socket, head, (ws) => {
        server.emit('connection', ws, req);
        // graphql-ws prints such errors with a stack on stderr as "internal" ones. They are the
        // client's (ws has already closed the socket, 1009 for a frame over the cap): one line.
        ws.removeAllListeners('error');
        ws.on('error', (error: Error & { code?: string }) =>
          options.logger.warn(
            { code: error.code, reason: error.message },
            'websocket closed on a protocol error',
          ),
        );
      });
    },
    get open() {
      return server.clients.size;
    },
    async close(graceMs = 1000) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(relaying),
        new Promise((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
      // graphql-ws sends `complete` from a microtask after the relay ends: let it go out first.
      await new Promise((resolve) => setImmediate(resolve));
      for (const ws of server.clients) ws.close(GOING_AWAY, 'The gateway is shutting down');
    },
  };
}

/**
 * graphql-ws's protocol on `server`'s sockets: the key taken at connection_init, each operation
 * handed to `relay` whole (graphql-ws picks subscribe or execute from FORWARDED's type, and both
 * relay), Yoga's formatted results sent on as they are.
 */
function serveGraphqlWs(
  server: WebSocketServer,
  relay: (forward: Forward) => Stoppable,
  keepAliveMs: number,
): void {
  useServer(
    {
      onConnect: (ctx) => {
        const params = ctx.connectionParams as { authorization?: unknown } | undefined;
        const fromParams = typeof params?.authorization === 'string' ? params.authorization : undefined;
        (ctx.extra as { authorization?: string }).authorization =
          fromParams ?? ctx.extra.request.headers.authorization;
        return true;
      },
      onSubscribe: (ctx, _id, payload) => ({
        schema: undefined as never,
        document: FORWARDED,
        contextValue: {
          payload,
          authorization: (ctx.extra as { authorization?: string }).authorization,
          req: ctx.extra.request,
        } satisfies Forward,
      }),
      subscribe: (args) => relay(args.contextValue as Forward),
      // Yoga has already formatted each result (masked errors, codes): sent on as they are.
      onNext: (_ctx, _id, _payload, _args, result) => result,
      execute: (args) => relay(args.contextValue as Forward),
      // Close reasons never carry an internal error's message, whatever NODE_ENV says.
      isProd: true,
      jsonMessageReviver: withQueryText,
    },
    server,
    keepAliveMs,
  );
}

/**
 * graphql-ws requires `query` text in every `subscribe` payload, so an operation sent by its
 * trusted document's id or its APQ hash alone would close the socket (4400). Such a payload is
 * given an empty `query` to pass that check; `relay` leaves it out again, so Yoga sees the
 * parameters the client sent, as over HTTP.
 */
function withQueryText(key: string, value: unknown): unknown {
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

/** Why an upgrade is refused: not /graphql, not graphql-ws's subprotocol, or a foreign Origin. */
function refusalOf(
  req: IncomingMessage,
  origins: readonly string[],
): { status: string; code: string; message: string } | undefined {
  if ((req.url ?? '').split('?', 1)[0] !== '/graphql') {
    return { status: '404 Not Found', code: 'NOT_FOUND', message: 'WebSockets are served at /graphql.' };
  }
  const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  if (!protocols.includes(PROTOCOL)) {
    return {
      status: '400 Bad Request',
      code: 'BAD_REQUEST',
      message: `Use the ${PROTOCOL} subprotocol (graphql-ws).`,
    };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !origins.includes('*') && !origins.includes(origin)) {
    return {
      status: '403 Forbidden',
      code: 'FORBIDDEN',
      message: 'This Origin may not open a WebSocket here.',
    };
  }
  return undefined;
}

/** An operation's results, as graphql-ws reads them: `return()` is its client's `complete`. */
interface Stoppable extends AsyncIterableIterator<ExecutionResult> {
  return(): Promise<IteratorResult<ExecutionResult>>;
}

/**
 * `events`, with a `return()` that stops them at once. graphql-ws calls `return()` when the client
 * sends `complete` or the socket closes; an async generator's own `return()` waits until the
 * generator next yields, which for a live list is its next change, perhaps never: the watch, its
 * polls and its place under the caps would be held by nobody. Aborting the request to Yoga ends
 * the subscription there, and the relay with it.
 */
function stoppable(events: AsyncGenerator<ExecutionResult>, abort: AbortController): Stoppable {
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
async function* relay(
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
