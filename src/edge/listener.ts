import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  Server,
  type ServerResponse,
} from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Answered, CODES } from '../codes.ts';
import type { ConnectionClose } from '../observability/metrics.ts';
import { errorBody, refuse, statusLine } from '../policy/error-body.ts';
import { createConnectionAdmission } from './connections.ts';

export type { ConnectionClose } from '../observability/metrics.ts';

export interface HttpServerOptions {
  /**
   * Client connections held at once. A new connection beyond it closes the oldest idle one (no
   * request in flight: keep-alive, or accepted over unparsedGraceMs ago with no request yet), or is
   * itself refused when every connection is busy, so a crowd of sockets cannot take the process's
   * last file descriptors. @default 1024
   */
  maxConnections?: number;
  /** Connections one client address may hold; the same rule applies within it. @default a quarter of maxConnections, at least 8 */
  maxConnectionsPerAddress?: number;
  /** Connections past the cap that serve `/health` and `/readiness` only. @default 4 */
  probeSlots?: number;
  /** A new connection is not idle (evictable) before this, unless it has served a request. @default 1000 */
  unparsedGraceMs?: number;
  /** Minimum request-body rate, enforced after bodyGraceMs: slower bodies are answered 408. @default 240 */
  minBodyBytesPerSecond?: number;
  /** @default 5000 */
  bodyGraceMs?: number;
  /** Peers that are the operator's proxies: their connections carry many clients, so have no per-address share. */
  isProxy?: (address: string) => boolean;
  /** A request's headers must arrive within this. @default 10000 */
  headersTimeoutMs?: number;
  /** A whole request (headers and body) must arrive within this. @default 30000 */
  requestTimeoutMs?: number;
  /** Idle keep-alive connections close after this (longer than typical LB idle timeouts). @default 65000 */
  keepAliveTimeoutMs?: number;
  /** Told of every connection the listener closes itself. Must not throw. */
  onClose?: (reason: ConnectionClose) => void;
}

type ClientSocket = Socket & { _httpMessage?: ServerResponse };

/** The HTTP server, and how it leaves. */
export interface HttpServer extends Server {
  /**
   * Stops accepting connections and lets the open ones finish: every response from now on carries
   * `Connection: close`, idle connections close after `idleGraceMs`, busy ones once answered.
   * Resolves when no connection is left.
   */
  drain(idleGraceMs?: number): Promise<void>;
  /** Hands upgrade requests to `upgrade` once the connection's admission allows a long-lived stream. */
  serveUpgrades(upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): void;
  /** Closes every connection at once, upgraded sockets included (Node's own misses those). */
  closeAllConnections(): void;
}

/**
 * Node's parser refused a request (bad header bytes, oversized headers, a timeout): answered with
 * the JSON error body a client reads, never a bare status line.
 */
function answerClientError(
  onClose: (reason: ConnectionClose) => void,
): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // A pipelined request's answer may already be on the wire: a status line written now would
    // land inside it. Node's own handler makes the same check.
    const inFlight = (socket as ClientSocket)._httpMessage;
    if (!socket.writable || error.code === 'ECONNRESET' || inFlight?.headersSent) return socket.destroy();
    const [answer, message]: [Answered, string] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [CODES.HEADERS_TOO_LARGE, 'The request headers are too large.']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [CODES.REQUEST_TIMEOUT, 'The request did not arrive in time.']
          : [CODES.BAD_REQUEST, 'Malformed HTTP request.'];
    const body = errorBody(answer, message);
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') onClose('timeout');
    socket.end(
      `HTTP/1.1 ${statusLine(answer)}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncache-control: no-store\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
}

/**
 * The Node HTTP server in front of the gateway. It refuses what must never reach GraphQL (an
 * ambiguous pair of Authorization headers: Node would silently keep the first) and answers
 * requests Node's parser rejects (bad header bytes such as CR/LF, oversized headers) with a JSON
 * error body rather than a bare status line. Who may hold a connection, and how slow it may be, is
 * connections.ts's (see HttpServerOptions).
 */
export function createHttpServer(handler: RequestListener, options: HttpServerOptions = {}): HttpServer {
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const onClose = options.onClose ?? (() => {});
  const maxConnections = options.maxConnections ?? 1024;
  const admission = createConnectionAdmission({
    maxConnections,
    maxConnectionsPerAddress: options.maxConnectionsPerAddress ?? Math.max(8, Math.floor(maxConnections / 4)),
    probeSlots: options.probeSlots ?? 4,
    unparsedGraceMs: options.unparsedGraceMs ?? 1000,
    minBodyBytesPerSecond: options.minBodyBytesPerSecond ?? 240,
    bodyGraceMs: options.bodyGraceMs ?? 5000,
    isProxy: options.isProxy ?? (() => false),
    onClose,
  });
  const server = createServer(
    {
      // Node checks the header and request timeouts on this interval (30 s by default, so a socket
      // sending nothing was held for up to 40 s).
      connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeout / 2)),
      // Node answers a missing Host with a bare 400; checked below, with a JSON body.
      requireHostHeader: false,
    },
    (req: IncomingMessage, res: ServerResponse) => {
      if (!admission.request(req, res)) return;
      const hostRefusal = hostProblem(req);
      if (hostRefusal !== undefined) {
        res.shouldKeepAlive = false;
        return refuse(res, CODES.BAD_REQUEST, hostRefusal);
      }
      if (countHeader(req.rawHeaders, 'authorization') > 1) {
        return refuse(res, CODES.BAD_REQUEST, 'Send exactly one Authorization header.');
      }
      // Node frames any Transfer-Encoding ending in `chunked` but decodes no other coding, so
      // `gzip, chunked` would be read as if it were plain: refuse codings we do not implement.
      const transferEncoding = req.headers['transfer-encoding'];
      if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
        res.shouldKeepAlive = false;
        return refuse(res, CODES.BAD_REQUEST, 'Only the chunked transfer coding is supported.');
      }
      handler(req, res);
    },
  );
  // Behind a load balancer: keep idle connections longer than typical LB idle timeouts (60 s),
  // and bound how long a client may take to send its headers and body.
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 65_000;
  server.headersTimeout = headersTimeout;
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;

  // Any expectation but 100-continue (which Node answers itself): Node's default is a bare 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    if (!admission.request(req, res)) return;
    res.shouldKeepAlive = false;
    refuse(res, CODES.EXPECTATION_FAILED, 'Only "Expect: 100-continue" is supported.');
  });
  server.on('connection', admission.admit);
  server.on('close', admission.close);
  const drain = (idleGraceMs = 1000) =>
    new Promise<void>((resolve) => {
      admission.drain(idleGraceMs);
      // net.Server's close, not http.Server's: that one also closes idle keep-alive connections at
      // once, under requests a proxy may be sending on them.
      NetServer.prototype.close.call(server, () => resolve());
    });

  server.on('clientError', answerClientError(onClose));
  const serveUpgrades = (upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void) =>
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (admission.upgrade(req, socket)) upgrade(req, socket, head);
    });
  const closeAllConnections = () => {
    Server.prototype.closeAllConnections.call(server);
    admission.destroyAll();
  };
  return Object.assign(server, { drain, serveUpgrades, closeAllConnections });
}

/**
 * Why the request's Host cannot be trusted, or undefined. RFC 9112 §3.2: a server must answer 400 to
 * an HTTP/1.1 request without Host or with more than one (Node would silently keep the first).
 */
function hostProblem(req: IncomingMessage): string | undefined {
  const hosts = countHeader(req.rawHeaders, 'host');
  if (hosts > 1) return 'Send exactly one Host header.';
  if (hosts === 0 && req.httpVersion === '1.1') return 'An HTTP/1.1 request must carry a Host header.';
  return undefined;
}

function countHeader(rawHeaders: string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.length === name.length && rawHeaders[i]?.toLowerCase() === name) count++;
  }
  return count;
}
