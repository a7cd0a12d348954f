import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';

/** The GraphQL-over-HTTP error body for requests refused before Yoga sees them. */
function errorBody(code: string, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] });
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(errorBody(code, message));
}

/**
 * The Node HTTP server in front of the gateway. It refuses what must never reach GraphQL (an
 * ambiguous pair of Authorization headers: Node would silently keep the first) and answers
 * requests Node's parser rejects (bad header bytes such as CR/LF, oversized headers) with a JSON
 * error body rather than a bare status line.
 */
export function createHttpServer(handler: RequestListener): Server {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
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
  });
  // Behind a load balancer: keep idle connections longer than typical LB idle timeouts (60 s),
  // and bound how long a client may take to send its headers and body.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A pipelined request's answer may already be on the wire: a status line written now would
    // land inside it. Node's own handler makes the same check.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (!socket.writable || error.code === 'ECONNRESET' || inFlight?.headersSent) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const body = tooLarge
      ? errorBody('HEADERS_TOO_LARGE', 'The request headers are too large.')
      : errorBody('BAD_REQUEST', 'Malformed HTTP request.');
    socket.end(
      `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
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
