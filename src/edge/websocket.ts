import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { CloseCode } from 'graphql-ws';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import { type Answered, CODES } from '../codes.ts';
import type { WebSocketSettings } from '../config/websocket.ts';
import type { ConnectionClose } from '../observability/metrics.ts';
import { errorBody, statusLine } from '../policy/error-body.ts';
import { type Peer, type ProtocolServer, protocolServer } from './websocket-protocol.ts';
import { type Forward, relay, type Stoppable, stoppable, type YogaFetch } from './websocket-relay.ts';

/** RFC 6455's "going away": a server shutting down. */
const GOING_AWAY = 1001;
/** RFC 6455's "policy violation": a client that floods or does not read what it is sent. */
const POLICY_VIOLATION = 1008;
/**
 * How long a socket being closed may take to answer the close frame before it is cut: a client
 * that does not read never answers, and `ws` would wait 30 s.
 */
const CLOSE_TIMEOUT_MS = 1000;

/** graphql-ws's subprotocol; the legacy `graphql-ws` (subscriptions-transport-ws) is not served. */
const PROTOCOL = 'graphql-transport-ws';

export interface WebSocketOptions {
  yoga: YogaFetch;
  /** Largest message accepted (the body cap): a larger one closes the socket (1009). */
  maxPayloadBytes: number;
  /** Who may open a WebSocket, by its `Origin` (the one rule of CORS_ORIGINS). */
  originAllowed: (origin: string | undefined) => boolean;
  /** What one socket may hold and send (WS_MAX_*). */
  bounds: WebSocketSettings;
  /** Ping each socket this often; one that has not answered by the next ping is cut. @default 12000 */
  keepAliveMs?: number;
  /** A socket must send a `connection_init` with a usable key within this. @default 3000 */
  initTimeoutMs?: number;
  /** Where a socket closed for what its client did is told, as one warn line. */
  logger: Pick<Logger, 'warn' | 'debug'>;
  /** Told of every socket closed for its client's behaviour, for /metrics. Must not throw. */
  onClose?: (reason: ConnectionClose) => void;
}

export interface WebSockets {
  /**
   * Node's `upgrade` listener (after the listener's admission): takes WebSocket requests to
   * /graphql, refuses any other.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Open sockets, for /metrics and the drain. */
  readonly open: number;
  /**
   * Closes every socket with 1001 (going away), so clients reconnect to another instance: idle
   * ones at once, the others once their operations have sent their last events (at most
   * `graceMs`). A socket that does not answer the close frame is cut a second later.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * The listener's view of an upgraded socket (edge/connections.ts): it counts against the
 * connection cap for as long as it is open, and may be closed to make room when it is idle.
 */
export type StreamSocket = Duplex & {
  longLived?: boolean;
  /** `keyless`: no usable key yet; `idle`: keyed, no operation running; `busy` otherwise. */
  streamState?: () => 'keyless' | 'idle' | 'busy';
};

/**
 * GraphQL over WebSocket (graphql-ws's protocol, through its `makeServer`) on `/graphql`. A
 * browser cannot set headers on a WebSocket, so the key comes in `connectionParams`'
 * `authorization` (any case, as HTTP headers; an `Authorization` header on the upgrade request is
 * taken too); a `connection_init` without a usable key is refused (4403). Each operation is sent
 * to Yoga as the same operation over SSE would be, with the key: limits, cost, trusted documents,
 * the rate limit, logs and metrics are the same as for any request, and its events are relayed as
 * they come. What one socket holds is bounded whatever its client does: its unsent bytes, its
 * messages a second, its operations at once.
 */
export function createWebSockets(options: WebSocketOptions): WebSockets {
  // Operations relaying now, so the drain can let them send their `complete` before closing.
  const relaying = new Set<Promise<void>>();
  const peers = new Set<Peer>();
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes,
    handleProtocols: (protocols) => (protocols.has(PROTOCOL) ? PROTOCOL : false),
  });
  const protocol = protocolServer(options, (forward) => relayed(relaying, options.yoga, forward));
  const keepAliveMs = options.keepAliveMs ?? 12_000;
  return {
    upgrade(req, socket, head) {
      const refusal = refusalOf(req, options.originAllowed);
      if (refusal) {
        socket.end(
          `HTTP/1.1 ${statusLine(refusal.answer)}\r\ncontent-type: application/json; charset=utf-8\r\nconnection: close\r\n\r\n${errorBody(refusal.answer, refusal.message)}`,
        );
        return;
      }
      server.handleUpgrade(req, socket, head, (ws) => {
        const peer: Peer = {
          ws,
          authorization: undefined,
          refusal: undefined,
          operations: 0,
          windowStart: 0,
          messages: 0,
          awaitingPong: false,
          closing: false,
        };
        peers.add(peer);
        markStream(socket as StreamSocket, peer);
        serveSocket(peer, req, protocol, options, keepAliveMs);
        ws.once('close', () => peers.delete(peer));
      });
    },
    get open() {
      return server.clients.size;
    },
    async close(graceMs = 1000) {
      // Nothing runs on an idle socket: it goes now, so the drain waits only for real work.
      for (const peer of peers)
        if (peer.operations === 0) shut(peer, GOING_AWAY, 'The gateway is shutting down');
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
      for (const peer of peers) shut(peer, GOING_AWAY, 'The gateway is shutting down');
      await closed(peers, CLOSE_TIMEOUT_MS + 100);
    },
  };
}

/** Resolves once every socket of `peers` is gone, or after `ms`. */
async function closed(peers: Set<Peer>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (peers.size > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** An operation's relay, registered so the drain can wait for it. */
function relayed(relaying: Set<Promise<void>>, yoga: YogaFetch, forward: Forward): Stoppable {
  let done = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  relaying.add(finished);
  const abort = new AbortController();
  const events = (async function* () {
    try {
      yield* relay(yoga, forward, abort.signal);
    } finally {
      // However the relay ended (its last event, an error), the request to Yoga ends with it.
      abort.abort();
      relaying.delete(finished);
      done();
    }
  })();
  return stoppable(events, abort);
}

function markStream(socket: StreamSocket, peer: Peer): void {
  // A socket past its upgrade has no HTTP message: the connection cap must not take it for an idle
  // keep-alive connection; it says itself when it may make room.
  socket.longLived = true;
  socket.streamState = () =>
    peer.authorization === undefined ? 'keyless' : peer.operations === 0 ? 'idle' : 'busy';
}

/**
 * Closes `peer`'s socket with `code`; a client that does not answer the close frame (it is not
 * reading) is cut after CLOSE_TIMEOUT_MS, so what it has not read is freed.
 */
function shut(peer: Peer, code: number, reason: string): void {
  if (peer.closing) return;
  peer.closing = true;
  if (peer.ws.readyState === WebSocket.OPEN) peer.ws.close(code, reason);
  setTimeout(() => peer.ws.terminate(), CLOSE_TIMEOUT_MS).unref();
}

/**
 * One socket under graphql-ws's protocol, with its bounds: a message past its second's budget, or
 * sent while more than `maxBufferedBytes` wait unread, closes it (1008); a send that would queue
 * past that is not made; a keep-alive ping unanswered by the next one cuts it. Errors on a socket
 * whose client went away are a debug line, never a stack.
 */
function serveSocket(
  peer: Peer,
  req: IncomingMessage,
  protocol: ProtocolServer,
  options: WebSocketOptions,
  keepAliveMs: number,
): void {
  const { ws } = peer;
  const { maxBufferedBytes, maxMessagesPerSecond } = options.bounds;
  const breach = (reason: ConnectionClose, message: string) => {
    if (peer.closing) return;
    options.logger.warn({ reason, operations: peer.operations, bufferedBytes: ws.bufferedAmount }, message);
    options.onClose?.(reason);
    shut(peer, POLICY_VIOLATION, message);
  };
  const slowReader = () =>
    breach('slow_reader', 'WebSocket closed: its client is not reading what it is sent');
  // The socket's own errors (a frame over the cap: ws has closed it, 1009; a reset) are its client's.
  ws.on('error', (error: Error & { code?: string }) =>
    options.logger.warn({ code: error.code, reason: error.message }, 'websocket closed on a protocol error'),
  );
  const closedByProtocol = protocol.opened(
    {
      protocol: ws.protocol,
      send: (data) =>
        new Promise<void>((resolve) => {
          if (ws.readyState !== WebSocket.OPEN || peer.closing) return resolve();
          if (ws.bufferedAmount + data.length > maxBufferedBytes) {
            slowReader();
            return resolve();
          }
          // A send that fails (the socket went away meanwhile) has nobody left to tell.
          ws.send(data, () => resolve());
        }),
      close: (code, reason) => {
        const refused = code === CloseCode.Forbidden && peer.refusal !== undefined;
        shut(peer, code ?? 1000, refused ? (peer.refusal as string) : (reason ?? ''));
      },
      onMessage: (handle) =>
        ws.on('message', (data) => {
          if (peer.closing) return;
          const now = Date.now();
          if (now - peer.windowStart >= 1000) {
            peer.windowStart = now;
            peer.messages = 0;
          }
          if (++peer.messages > maxMessagesPerSecond) {
            return breach('flood', `WebSocket closed: more than ${maxMessagesPerSecond} messages a second`);
          }
          if (ws.bufferedAmount > maxBufferedBytes) return slowReader();
          handle(String(data)).catch((error: unknown) => {
            options.logger.debug({ reason: (error as Error).message }, 'websocket message not handled');
            shut(peer, CloseCode.BadRequest, 'Invalid message received');
          });
        }),
    },
    { peer, req },
  );
  const ping = setInterval(() => {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (peer.awaitingPong) return slowReader();
    peer.awaitingPong = true;
    ws.ping();
  }, keepAliveMs);
  ws.on('pong', () => {
    peer.awaitingPong = false;
  });
  ws.once('close', (code, reason) => {
    clearInterval(ping);
    closedByProtocol(code, String(reason)).catch((error: unknown) =>
      options.logger.debug({ reason: (error as Error).message }, 'websocket close not handled'),
    );
  });
}

/** Why an upgrade is refused: not /graphql, not graphql-ws's subprotocol, or a foreign Origin. */
function refusalOf(
  req: IncomingMessage,
  originAllowed: (origin: string | undefined) => boolean,
): { answer: Answered; message: string } | undefined {
  if ((req.url ?? '').split('?', 1)[0] !== '/graphql') {
    return { answer: CODES.NOT_FOUND, message: 'WebSockets are served at /graphql.' };
  }
  const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  if (!protocols.includes(PROTOCOL)) {
    return { answer: CODES.BAD_REQUEST, message: `Use the ${PROTOCOL} subprotocol (graphql-ws).` };
  }
  if (!originAllowed(req.headers.origin)) {
    return { answer: CODES.FORBIDDEN, message: 'This Origin may not open a WebSocket here.' };
  }
  return undefined;
}
