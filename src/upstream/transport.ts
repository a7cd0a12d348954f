import type { IncomingHttpHeaders } from 'node:http';
import { type Dispatcher, Pool } from 'undici';
import type { ContractRoute } from '../contract/routes.ts';
import type { Authorization } from './authorization.ts';
import type { CallScope } from './deadline.ts';
import {
  expiryError,
  UpstreamBadResponseError,
  UpstreamCancelledError,
  UpstreamError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from './errors.ts';
import type { AttemptEnd, AttemptOutcome, UpstreamObserver, UpstreamRoute } from './observer.ts';

/*
 * The client's lowest layer: one HTTP exchange with the upstream origin, bounded by its call's
 * scope (deadline.ts), reported to the observers. Retries and the breaker are retry.ts's; routes,
 * bodies and coalescing are client.ts's.
 */

/** A page of 100 pets is ~10 KB; anything near this cap is not the contract's answer. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface TransportOptions {
  baseUrl: URL;
  timeoutMs: number;
  connections: number;
  observers: readonly UpstreamObserver[];
}

/**
 * How a call in callback form settles: once, with an error or a value. Each layer's own work is done
 * in this form and its promise is a wrapper (`promised`): a path that needs no promise (the fast
 * lane's one-call plans) pays for none per layer.
 */
export type Done<T> = (error: UpstreamError | undefined, value?: T) => void;

/** One REST exchange's shape, as each layer of the client offers it to the one above. */
export type Send = (
  route: ContractRoute,
  path: string,
  auth: Authorization,
  body: string | undefined,
  scope: CallScope,
  done: Done<RawResponse>,
) => void;

/** The promise of a call in callback form: its error rejects it, its value resolves it. */
export function promised<T>(start: (done: Done<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((error, value) => {
      if (error === undefined) resolve(value as T);
      else reject(error);
    });
  });
}

export interface Transport {
  /**
   * One exchange; fails with an UpstreamError (once the scope expires: a timeout, or a
   * cancellation when its client went away).
   */
  readonly exchange: Send;
  /** Whether the upstream answers at all (readiness): any status below 500 within a second. */
  probe(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * One keep-alive undici `Pool` for the upstream origin, for the life of the process. The pool never
 * follows redirects, so the caller's token only ever goes to `baseUrl`.
 */
export function createTransport(options: TransportOptions): Transport {
  const { baseUrl, timeoutMs } = options;
  const pool = openPool(baseUrl, timeoutMs, options.connections);
  return {
    exchange: exchangeOver(pool, baseUrl.pathname, options.observers),
    probe: () => probe(pool, baseUrl.pathname, timeoutMs),
    close: () => pool.close(),
  };
}

function openPool(baseUrl: URL, timeoutMs: number, connections: number): Pool {
  return new Pool(baseUrl.origin, {
    connections,
    pipelining: 1,
    connect: { timeout: Math.min(timeoutMs, 3000) },
    // undici's defaults are 300 s; the whole-call deadline (each exchange's scope) is the real
    // bound, these only make sure no timer outlives it.
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 4000,
    maxResponseSize: MAX_RESPONSE_BYTES,
  });
}

/**
 * One HTTP exchange, through undici's dispatcher with a handler of our own: the body is collected
 * as chunks and decoded once, and the scope aborts the exchange through undici's controller. Not
 * `pool.request`: its response stream, async resource and signal listener cost more per call than
 * the rest of the client did (measured, see docs/performance.md).
 */
function exchangeOver(pool: Pool, basePath: string, observers: readonly UpstreamObserver[]): Send {
  return (route, path, auth, body, scope, done) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (auth !== undefined) headers.authorization = auth;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const ends = observers.length === 0 ? undefined : startAttempt(observers, route, headers);
    const exchange = new Exchange(
      ends === undefined ? done : observed(done, ends, route.name, performance.now()),
      scope,
    );
    // undici honours an abort once a socket is connected, but not while a connect is pending (its
    // connect timer is coarse): the exchange fails at once, and undici's late answer is dropped.
    exchange.forget = scope.onExpire(() => exchange.fail(expiryError(scope)));
    if (exchange.settled) return;
    pool.dispatch({ method: route.method, path: basePath + path, headers, body }, exchange);
  };
}

/** `done`, after telling the observers how the attempt ended. */
function observed(
  done: Done<RawResponse>,
  ends: Array<(end: AttemptEnd) => void>,
  route: UpstreamRoute,
  started: number,
): Done<RawResponse> {
  return (error, response) => {
    const durationMs = performance.now() - started;
    if (error === undefined) {
      const status = (response as RawResponse).status;
      const outcome = status < 300 ? 'ok' : 'http_error';
      for (const end of ends) end({ route, outcome, status, durationMs });
    } else {
      const outcome = outcomeOf(error);
      for (const end of ends) end({ route, outcome, durationMs });
    }
    done(error, response);
  };
}

/** Tells each observer an attempt starts (they may add headers); what each wants told when it ends. */
function startAttempt(
  observers: readonly UpstreamObserver[],
  route: ContractRoute,
  headers: Record<string, string>,
): Array<(end: AttemptEnd) => void> {
  const ends: Array<(end: AttemptEnd) => void> = [];
  for (const observer of observers) {
    const end = observer.attempt?.(route, headers);
    if (end) ends.push(end);
  }
  return ends;
}

async function probe(pool: Pool, basePath: string, timeoutMs: number): Promise<boolean> {
  try {
    const response = await pool.request({
      method: 'GET',
      path: `${basePath}/pets?limit=1`,
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(Math.min(timeoutMs, 1000)),
    });
    await response.body.dump();
    return response.statusCode < 500;
  } catch {
    return false;
  }
}

/**
 * One exchange's undici handler (the dispatcher's handler API): it keeps the status and headers,
 * collects the body, and settles once, with the answer or the first failure as an UpstreamError (its
 * own deadline's included, which aborts the exchange if undici has started it).
 */
class Exchange implements Dispatcher.DispatchHandler {
  settled = false;
  forget: () => void = noop;
  #controller: Dispatcher.DispatchController | undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  readonly #done: Done<RawResponse>;
  readonly #scope: CallScope;

  constructor(done: Done<RawResponse>, scope: CallScope) {
    this.#done = done;
    this.#scope = scope;
  }

  fail(error: UpstreamError): void {
    if (this.settled) return;
    this.settled = true;
    this.forget();
    this.#controller?.abort(error);
    this.#done(error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.settled) controller.abort(new UpstreamTimeoutError('deadline passed'));
    else this.#controller = controller;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    // 1xx (informational) answers are not the response.
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    this.forget();
    const chunks = this.#chunks;
    let text =
      chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
    // As fetch's and undici's text(): UTF-8 decode drops a leading byte order mark.
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    this.#done(undefined, { status: this.#status, headers: this.#headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.forget();
    this.#done(classify(error, this.#scope));
  }
}

const noop = () => {};

function outcomeOf(error: UpstreamError): AttemptOutcome {
  if (error instanceof UpstreamTimeoutError) return 'timeout';
  if (error instanceof UpstreamCancelledError) return 'cancelled';
  if (error instanceof UpstreamBadResponseError) return 'bad_response';
  return 'unavailable';
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function classify(error: unknown, scope: CallScope): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (scope.expired) return expiryError(scope, error);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code))
    return new UpstreamTimeoutError(code, { cause: error });
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new UpstreamBadResponseError(code, { cause: error });
  return new UpstreamUnavailableError(typeof code === 'string' ? code : 'network error', { cause: error });
}
