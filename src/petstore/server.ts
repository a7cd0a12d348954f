import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ErrorCode } from '../contract/errors.ts';
import { HttpError } from './errors.ts';
import { sendJson } from './http.ts';
import { stringifyJson } from './json.ts';
import { type AuthFailure, createAuthenticator, ensureDevKey } from './keys.ts';
import { type ExtraRoute, type Route, serviceRoutes } from './routes.ts';
import { SAMPLE_PETS } from './seed.ts';
import { openStorage, type Storage } from './storage.ts';

export interface PetstoreOptions {
  /** SQLite file path or ':memory:' */
  dbPath: string;
  /** a key that is always valid (PETSTORE_API_KEY) */
  apiKey?: string;
  /** one line per request, never containing the key; default: no logging */
  log?: (line: string) => void;
  /** seed sample pets into an empty database. @default true */
  seed?: boolean;
  /** routes the contract lacks, served beside its own (a test's); the service itself has none */
  routes?: readonly ExtraRoute[];
}

export interface RunningPetstore {
  /** base URL ending in /v1, e.g. http://127.0.0.1:41234/v1 */
  url: string;
  /** the development key created on first start when no key was configured and the key table was empty; else undefined */
  devKey?: string;
  /** graceful: stop accepting, finish in-flight requests, close the database */
  close(): Promise<void>;
}

/** How long a client may take to send headers / the whole request before Node answers 408. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** close() waits this long for in-flight requests before cutting the remaining connections. */
const DRAIN_TIMEOUT_MS = 10_000;

interface HandlerDeps {
  routes: readonly Route[];
  storage: Storage;
  authenticate: (authorization: string | undefined) => AuthFailure | undefined;
  log?: (line: string) => void;
  /** true once close() started: answers then carry `Connection: close` so keep-alive sockets drain */
  isClosing: () => boolean;
  /** called after each response once close() started: a request that began before close() leaves a
   * keep-alive socket behind that would otherwise hold close() open until keepAliveTimeout */
  onFinishWhileClosing: () => void;
}

/**
 * One 401 for every failure, as the contract has it, but worded for each: a caller with a key
 * that is merely unknown here (mistyped, revoked, made for another store) should not be told to
 * send a header it did send.
 */
const AUTH_MESSAGES: Record<AuthFailure, string> = {
  missing: 'an API key is required: send Authorization: Bearer <API_KEY>',
  malformed: 'the Authorization header must be Bearer <API_KEY>',
  unknown: 'this API key is not known to the service: check it, or ask for a new one',
};

function matchRoute(routes: readonly Route[], path: string): { route: Route; params: string[] } | undefined {
  for (const route of routes) {
    const match = route.pattern.exec(path);
    if (match !== null) return { route, params: match.slice(1) };
  }
  return undefined;
}

function createRequestHandler(
  deps: HandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const started = performance.now();
    const rawUrl = req.url ?? '/';
    const queryStart = rawUrl.indexOf('?');
    const path = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
    const query = new URLSearchParams(queryStart === -1 ? '' : rawUrl.slice(queryStart + 1));
    const method = req.method ?? 'GET';
    if (deps.log !== undefined) {
      const log = deps.log;
      // The path only: never headers (the key) nor the query string.
      res.once('close', () => {
        const status = res.writableFinished ? res.statusCode : 'aborted';
        log(`${method} ${path} ${status} ${(performance.now() - started).toFixed(1)}ms`);
      });
    }
    if (deps.isClosing()) res.setHeader('Connection', 'close');
    res.once('finish', () => {
      if (deps.isClosing()) deps.onFinishWhileClosing();
    });
    try {
      assertPlainHttp(req);
      const found = matchRoute(deps.routes, path);
      if (found === undefined) throw new HttpError('NOT_FOUND', `no route for ${path}`);
      const { route, params } = found;
      for (const [name, value] of Object.entries(route.headers?.[method] ?? {})) res.setHeader(name, value);
      const handler = route.methods[method];
      if (handler === undefined) {
        const allow = Object.keys(route.methods).join(', ');
        throw new HttpError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; allowed: ${allow}`, {
          Allow: allow,
        });
      }
      const authFailure = deps.authenticate(req.headers.authorization);
      if (authFailure !== undefined) {
        throw new HttpError('UNAUTHENTICATED', AUTH_MESSAGES[authFailure], { 'WWW-Authenticate': 'Bearer' });
      }
      await handler({ req, res, params, query, storage: deps.storage });
    } catch (error) {
      const httpError =
        error instanceof HttpError
          ? error
          : new HttpError('INTERNAL', 'the service failed to handle the request');
      // A client that went away mid-request is not a failure of ours: nothing to answer, nothing to report.
      if (res.destroyed) return;
      if (!(error instanceof HttpError)) console.error('petstore: unexpected error', error);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // The unread rest of an oversized body is never consumed: the connection is closed instead.
      if (httpError.code === 'PAYLOAD_TOO_LARGE') res.setHeader('Connection', 'close');
      sendJson(res, httpError.status, httpError.toDto(), httpError.headers);
    }
  };
}

/**
 * What Node's parser lets through but this service must not guess at, as the gateway refuses it too:
 * a transfer coding Node does not decode (`gzip, chunked` is framed as chunked, then read as if
 * plain), and two Authorization headers (Node keeps the first). The connection closes after either.
 */
function assertPlainHttp(req: IncomingMessage): void {
  const coding = req.headers['transfer-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') {
    throw new HttpError('BAD_REQUEST', 'only the chunked transfer coding is supported', {
      Connection: 'close',
    });
  }
  let authorizations = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === 'authorization') authorizations++;
  }
  if (authorizations > 1) {
    throw new HttpError('BAD_REQUEST', 'send exactly one Authorization header', { Connection: 'close' });
  }
}

/**
 * Requests Node's parser rejects never reach the handler; without this they would get a bodyless answer.
 * There is no response object here, so the Error is written to the socket directly.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // Like Node's default: never write over a response that has already started on this socket.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const code: ErrorCode =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'HEADERS_TOO_LARGE'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'REQUEST_TIMEOUT'
        : 'BAD_REQUEST';
  const messages: Record<string, string> = {
    HEADERS_TOO_LARGE: 'the request headers exceed 16 KiB',
    REQUEST_TIMEOUT: 'the request was not received in time',
    BAD_REQUEST: 'the request is not valid HTTP/1.1',
  };
  const httpError = new HttpError(code, messages[code] ?? 'bad request');
  const body = stringifyJson(httpError.toDto());
  socket.end(
    `HTTP/1.1 ${httpError.status} ${STATUS_CODES[httpError.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Opens the database (seeding an empty one unless `seed: false`, creating the development key when no key
 * exists and none is configured), then serves the REST v1 API under `/v1` and the quickstart test request
 * under `/quickstart/messages`. No env reads, no signal handling: that is `main.ts`'s job.
 */
export async function startPetstore(
  options: PetstoreOptions & { port?: number; host?: string },
): Promise<RunningPetstore> {
  const { dbPath, apiKey, log, seed = true, port = 0, host = '127.0.0.1', routes } = options;
  const storage = openStorage(dbPath);
  let closing = false;
  let devKey: string | undefined;
  let server: Server;
  let address: AddressInfo;
  try {
    devKey = ensureDevKey(storage, apiKey);
    if (seed) storage.seedPets(SAMPLE_PETS);
    const handler = createRequestHandler({
      routes: serviceRoutes(routes),
      storage,
      authenticate: createAuthenticator(storage, apiKey),
      isClosing: () => closing,
      onFinishWhileClosing: () => server.closeIdleConnections(),
      ...(log === undefined ? {} : { log }),
    });
    server = createServer(
      { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: 5_000 },
      (req, res) => void handler(req, res),
    );
    server.on('clientError', answerClientError);
    address = await listen(server, port, host);
  } catch (error) {
    storage.close();
    throw error;
  }

  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closed: Promise<void> | undefined;
  const running: RunningPetstore = {
    url: `http://${urlHost}:${address.port}/v1`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        const force = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          storage.close();
          resolve();
        });
        server.closeIdleConnections();
      });
      return closed;
    },
  };
  if (devKey !== undefined) running.devKey = devKey;
  return running;
}
