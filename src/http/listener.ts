import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** The GraphQL-over-HTTP error body for requests refused before Yoga sees them. */
function errorBody(code: string, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] });
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(errorBody(code, message));
}

/** Why the listener closed a client connection itself. */
export type ConnectionClose =
  /** At the cap with every connection busy: the new one was closed at once. */
  | 'refused'
  /** At the cap: the oldest idle connection was closed to make room for a new one. */
  | 'evicted'
  /** Headers or body not complete within headersTimeoutMs / requestTimeoutMs: answered 408. */
  | 'timeout';

export interface HttpServerOptions {
  /**
   * Client connections held at once. A new connection beyond it closes the oldest idle one (no
   * request in flight: keep-alive, or headers still trickling in), or is itself refused when every
   * connection is busy, so a crowd of idle sockets cannot take the process's last file descriptors
   * or keep a health probe out. @default 1024
   */
  maxConnections?: number;
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

/**
 * The Node HTTP server in front of the gateway. It refuses what must never reach GraphQL (an
 * ambiguous pair of Authorization headers: Node would silently keep the first) and answers
 * requests Node's parser rejects (bad header bytes such as CR/LF, oversized headers) with a JSON
 * error body rather than a bare status line. It holds at most `maxConnections` clients and closes
 * slow ones (see HttpServerOptions).
 */
export function createHttpServer(handler: RequestListener, options: HttpServerOptions = {}): Server {
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const onClose = options.onClose ?? (() => {});
  const server = createServer(
    {
      // Node checks the header and request timeouts on this interval (30 s by default, so a socket
      // sending nothing was held for up to 40 s).
      connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeout / 2)),
    },
    (req: IncomingMessage, res: ServerResponse) => {
      if (countHeader(req.rawHeaders, 'authorization') > 1) {
        return refuse(res, 400, 'BAD_REQUEST', 'Send exactly one Authorization header.');
      }
      // Node frames any Transfer-Encoding ending in `chunked` but decodes no other coding, so
      // `gzip, chunked` would be read as if it were plain: refuse codings we do not implement.
      const transferEncoding = req.headers['transfer-encoding'];
      if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
        res.shouldKeepAlive = false;
        return refuse(res, 400, 'BAD_REQUEST', 'Only the chunked transfer coding is supported.');
      }
      handler(req, res);
    },
  );
  // Behind a load balancer: keep idle connections longer than typical LB idle timeouts (60 s),
  // and bound how long a client may take to send its headers and body.
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 65_000;
  server.headersTimeout = headersTimeout;
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;

  // Oldest first (insertion order): the connection evicted at the cap is the longest-held idle one.
  const open = new Set<ClientSocket>();
  const maxConnections = options.maxConnections ?? 1024;
  server.on('connection', (socket: ClientSocket) => {
    if (open.size >= maxConnections) {
      let idle: ClientSocket | undefined;
      // A connection is busy while a response is assigned to it (Node's own bookkeeping).
      for (const candidate of open) {
        if (candidate._httpMessage == null) {
          idle = candidate;
          break;
        }
      }
      if (idle === undefined) {
        socket.destroy();
        onClose('refused');
        return;
      }
      open.delete(idle);
      idle.destroy();
      onClose('evicted');
    }
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A pipelined request's answer may already be on the wire: a status line written now would
    // land inside it. Node's own handler makes the same check.
    const inFlight = (socket as ClientSocket)._httpMessage;
    if (!socket.writable || error.code === 'ECONNRESET' || inFlight?.headersSent) return socket.destroy();
    const [status, body] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [
            '431 Request Header Fields Too Large',
            errorBody('HEADERS_TOO_LARGE', 'The request headers are too large.'),
          ]
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? ['408 Request Timeout', errorBody('REQUEST_TIMEOUT', 'The request did not arrive in time.')]
          : ['400 Bad Request', errorBody('BAD_REQUEST', 'Malformed HTTP request.')];
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') onClose('timeout');
    socket.end(
      `HTTP/1.1 ${status}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncache-control: no-store\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

function countHeader(rawHeaders: string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.length === name.length && rawHeaders[i]?.toLowerCase() === name) count++;
  }
  return count;
}
