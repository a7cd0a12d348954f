import type { IncomingHttpHeaders } from 'node:http';
import { type Dispatcher, Pool } from 'undici';
import {
  type ListPetsQuery,
  type NewPetDto,
  type PetDto,
  parseErrorBody,
  parsePet,
  parsePets,
  serializeNewPet,
} from './bodies.ts';
import { type BreakerOptions, type BreakerState, CircuitBreaker } from './breaker.ts';
import { createCoalescer } from './coalesce.ts';
import { type CallScope, type Deadline, DeadlineList } from './deadline.ts';
import {
  copyUpstreamError,
  UpstreamBadResponseError,
  UpstreamError,
  UpstreamRateLimitedError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from './errors.ts';

export interface UpstreamClientOptions {
  /** Base URL of the REST v1 service; its path (ending in `/v1`) prefixes every route. */
  baseUrl: URL;
  /** Whole-call deadline, from sending the request to the last byte of the body. */
  timeoutMs: number;
  /** Keep-alive connections kept to the upstream origin. */
  connections: number;
  /** Retries of an idempotent GET after a connection error, 502/503/504 or a short 429. @default 2 */
  maxRetries?: number;
  /** Backoff before retry n is a random delay up to `retryBaseMs * 2^n` (full jitter). @default 50 */
  retryBaseMs?: number;
  /** @default { failureThreshold: 5, openMs: 5000 } */
  breaker?: Omit<BreakerOptions, 'now' | 'onStateChange'>;
  /** Metrics, traces and logs watch the upstream through these; none by default. */
  observers?: UpstreamObserver[];
  /**
   * Share one in-flight GET between the operations of one caller that need it at the same time
   * (see coalesce.ts). @default true
   */
  coalesce?: boolean;
}

export type { Deadline } from './deadline.ts';

/** Route templates: what observers see instead of paths, so ids never reach a label or span name. */
export type UpstreamRoute = 'GET /pets' | 'GET /pets/{petId}' | 'POST /pets';

export type AttemptOutcome = 'ok' | 'http_error' | 'timeout' | 'unavailable' | 'bad_response';

/** How one attempt (one HTTP exchange) ended. */
export interface AttemptEnd {
  outcome: AttemptOutcome;
  /** The HTTP status, when one arrived. */
  status?: number;
  durationMs: number;
}

/** Watches upstream traffic. Every hook is optional and must not throw. */
export interface UpstreamObserver {
  /** Before each attempt; may add request headers (e.g. `traceparent`); returns its end callback. */
  attempt?(route: UpstreamRoute, headers: Record<string, string>): ((end: AttemptEnd) => void) | undefined;
  /** A GET is about to be retried. */
  retry?(route: UpstreamRoute, reason: 'unavailable' | 'overloaded' | 'rate_limited'): void;
  /** A call was refused by the open circuit, without touching the network. */
  shortCircuit?(route: UpstreamRoute): void;
  /** The origin's breaker changed state. */
  breaker?(state: BreakerState): void;
  /** A GET was served by the same caller's identical GET already in flight: one request saved. */
  coalesced?(route: UpstreamRoute): void;
  /** The upstream accepted (2xx) or refused (401) the caller's `Authorization` header. */
  keyAnswered?(auth: string, accepted: boolean): void;
}

/** What the upstream announced about a deprecated route (RFC 9745 / RFC 8594 header values). */
export interface UpstreamDeprecation {
  deprecation?: string;
  sunset?: string;
}

/** The caller's `Authorization` header, forwarded verbatim; undefined when the caller sent none. */
export type Authorization = string | undefined;

/** One typed method per REST operation. Every failure is an `UpstreamError`. */
export interface UpstreamClient {
  /** `GET /pets` (listPets). */
  listPets(auth: Authorization, query: ListPetsQuery, deadline?: Deadline): Promise<PetDto[]>;
  /**
   * `GET /pets/{petId}` (getPet, deprecated upstream). `onDeprecation` receives the upstream's
   * `Deprecation` / `Sunset` headers when it sends them.
   */
  getPet(
    auth: Authorization,
    id: string,
    deadline?: Deadline,
    onDeprecation?: (headers: UpstreamDeprecation) => void,
  ): Promise<PetDto>;
  /** `POST /pets` (createPet). Never retried: a repeated POST could create the pet twice. */
  createPet(auth: Authorization, pet: NewPetDto, deadline?: Deadline): Promise<PetDto>;
  /**
   * A fresh whole-operation deadline (`timeoutMs` from now, or `ms`) to share between calls;
   * release it when the operation is over.
   */
  deadline(ms?: number): Deadline;
  /** The origin's circuit breaker state. */
  readonly breakerState: CircuitBreaker['state'];
  /**
   * Whether the upstream answers HTTP at all (readiness): an unauthenticated `GET /pets?limit=1`
   * with a 1 s timeout; any status below 500 (the contract's 401 included) means up.
   */
  probe(): Promise<boolean>;
  /** Closes the pool once in-flight calls have finished. */
  close(): Promise<void>;
}

/** A page of 100 pets is ~10 KB; anything near this cap is not the contract's answer. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * Creates the client with one keep-alive undici `Pool` for the upstream origin, for the life of the
 * process. The pool never follows redirects, so the caller's token only ever goes to `baseUrl`.
 */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const { baseUrl, timeoutMs } = options;
  const basePath = baseUrl.pathname;
  const pool = new Pool(baseUrl.origin, {
    connections: options.connections,
    pipelining: 1,
    connect: { timeout: Math.min(timeoutMs, 3000) },
    // undici's defaults are 300 s; the whole-call deadline below is the real bound, these only
    // make sure no timer outlives it.
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 4000,
    maxResponseSize: MAX_RESPONSE_BYTES,
  });

  const maxRetries = options.maxRetries ?? 2;
  const retryBaseMs = options.retryBaseMs ?? 50;
  const observers = options.observers ?? [];
  const breaker = new CircuitBreaker({
    ...(options.breaker ?? { failureThreshold: 5, openMs: 5000 }),
    onStateChange: (state) => {
      for (const observer of observers) observer.breaker?.(state);
    },
  });
  const deadlines = new DeadlineList(timeoutMs);
  /** Full-jitter exponential backoff; the deadline cuts it short (as a timeout). */
  const backoff = (attempt: number, scope: CallScope) =>
    pause(Math.random() * retryBaseMs * 2 ** attempt, scope);

  /**
   * One HTTP exchange, through undici's dispatcher with a handler of our own: the body is collected
   * as chunks and decoded once, and the scope aborts the exchange through undici's controller. Not
   * `pool.request`: its response stream, async resource and signal listener cost more per call than
   * the rest of the client did (measured, see docs/performance.md).
   */
  function once(
    route: UpstreamRoute,
    path: string,
    auth: Authorization,
    body: string | undefined,
    scope: CallScope,
  ): Promise<RawResponse> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (auth !== undefined) headers.authorization = auth;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const ends = observers.length === 0 ? undefined : startAttempt(route, headers);
    const started = ends ? performance.now() : 0;
    return new Promise<RawResponse>((resolve, reject) => {
      const exchange = new Exchange(
        (response) => {
          if (ends) {
            const outcome = response.status < 300 ? 'ok' : 'http_error';
            for (const end of ends)
              end({ outcome, status: response.status, durationMs: performance.now() - started });
          }
          resolve(response);
        },
        (error) => {
          const failure = classify(error, scope);
          if (ends) {
            const outcome = outcomeOf(failure);
            for (const end of ends) end({ outcome, durationMs: performance.now() - started });
          }
          reject(failure);
        },
      );
      // undici honours an abort once a socket is connected, but not while a connect is pending (its
      // connect timer is coarse): the exchange fails at once, and undici's late answer is dropped.
      exchange.forget = scope.onExpire(() => exchange.fail(new UpstreamTimeoutError('deadline passed')));
      if (exchange.settled) return;
      pool.dispatch({ method: methodOf(route), path: basePath + path, headers, body }, exchange);
    });
  }

  function startAttempt(route: UpstreamRoute, headers: Record<string, string>) {
    const ends: Array<(end: AttemptEnd) => void> = [];
    for (const observer of observers) {
      const end = observer.attempt?.(route, headers);
      if (end) ends.push(end);
    }
    return ends;
  }

  function notifyRetry(route: UpstreamRoute, reason: 'unavailable' | 'overloaded' | 'rate_limited') {
    for (const observer of observers) observer.retry?.(route, reason);
  }

  /**
   * One REST call under the breaker. GETs are retried (connection errors, 502/503/504, and 429
   * when its Retry-After ends before the deadline); POSTs go out exactly once, whatever happens.
   * The scope bounds every attempt and every backoff: a slow-drip body cannot stretch it, unlike
   * undici's idle-only bodyTimeout.
   */
  async function call(
    route: UpstreamRoute,
    path: string,
    auth: Authorization,
    body: string | undefined,
    scope: CallScope,
  ): Promise<RawResponse> {
    const method = methodOf(route);
    for (let attempt = 0; ; attempt++) {
      if (scope.expired) throw new UpstreamTimeoutError('deadline passed');
      if (!breaker.tryAcquire()) {
        for (const observer of observers) observer.shortCircuit?.(route);
        throw new UpstreamUnavailableError('circuit open');
      }
      let response: RawResponse;
      try {
        response = await once(route, path, auth, body, scope);
      } catch (error) {
        const failure = error as UpstreamError;
        if (failure instanceof UpstreamUnavailableError || failure instanceof UpstreamTimeoutError)
          breaker.onFailure();
        else breaker.onSuccess();
        if (method !== 'GET' || attempt >= maxRetries || !(failure instanceof UpstreamUnavailableError))
          throw failure;
        notifyRetry(route, 'unavailable');
        await backoff(attempt, scope);
        continue;
      }
      const overloaded = response.status === 502 || response.status === 503 || response.status === 504;
      if (overloaded) breaker.onFailure();
      else breaker.onSuccess();
      if (method === 'GET' && attempt < maxRetries) {
        if (overloaded) {
          notifyRetry(route, 'overloaded');
          await backoff(attempt, scope);
          continue;
        }
        if (response.status === 429) {
          const wait = parseRetryAfter(response.headers['retry-after']);
          if (wait !== undefined && Date.now() + wait * 1000 < scope.end) {
            notifyRetry(route, 'rate_limited');
            await pause(wait * 1000, scope);
            continue;
          }
        }
      }
      if (auth !== undefined && (response.status < 300 || response.status === 401)) {
        for (const observer of observers) observer.keyAnswered?.(auth, response.status < 300);
      }
      return response;
    }
  }

  function fail(response: RawResponse): never {
    const retryAfter = parseRetryAfter(response.headers['retry-after']);
    const errorBody =
      response.status >= 400 ? parseErrorBody(response.status, response.text, retryAfter) : undefined;
    if (errorBody) throw errorBody;
    if (response.status === 429) throw new UpstreamRateLimitedError(retryAfter);
    if (response.status === 502 || response.status === 503 || response.status === 504) {
      throw new UpstreamUnavailableError(`status ${response.status}`);
    }
    throw new UpstreamBadResponseError(`unexpected status ${response.status}`);
  }

  // Identical GETs of one caller in flight at once are one request. The key holds the caller's
  // canonical Authorization header, so two callers never share a call; it lives in this process only
  // while the call is in flight, that is while the request holding the same header is alive (a
  // keyed hash of it, as before, cost an HMAC per call and protected nothing more). Not undici's
  // deduplicate interceptor: its key holds every request header verbatim on a diagnostics channel,
  // and the first request's abort fails every request that joined it, whereas here each operation
  // keeps its own deadline and the call ends only when all gave up.
  const coalescer = options.coalesce === false ? undefined : createCoalescer();
  /**
   * A GET, shared with the same caller's identical GET when one is in flight. Waiters share only
   * the raw answer (status, headers, text): each parses its own objects, and a failure reaches each
   * as an error of its own.
   */
  function get(getRoute: UpstreamRoute, path: string, auth: Authorization, deadline: Deadline) {
    if (coalescer === undefined || auth === undefined) return call(getRoute, path, auth, undefined, deadline);
    return coalescer
      .run(
        `${auth} ${path}`,
        deadline,
        (shared) => call(getRoute, path, auth, undefined, shared),
        () => {
          for (const observer of observers) observer.coalesced?.(getRoute);
        },
      )
      .catch((error: unknown) => {
        throw copyUpstreamError(error);
      });
  }

  /** A call made without an operation's deadline gets one of its own, released when it settles. */
  const withOwnDeadline = async <T>(run: (deadline: Deadline) => Promise<T>): Promise<T> => {
    const own = deadlines.create();
    try {
      return await run(own);
    } finally {
      own.release();
    }
  };

  const client: UpstreamClient = {
    async listPets(auth, query, deadline) {
      if (deadline === undefined) return withOwnDeadline((own) => client.listPets(auth, query, own));
      const status = query.status === undefined ? '' : `&status=${query.status}`;
      const response = await get('GET /pets', `/pets?limit=${query.limit}${status}`, auth, deadline);
      if (response.status !== 200) fail(response);
      return parsePets(response.text);
    },
    async getPet(auth, id, deadline, onDeprecation) {
      if (deadline === undefined)
        return withOwnDeadline((own) => client.getPet(auth, id, own, onDeprecation));
      const response = await get('GET /pets/{petId}', `/pets/${encodeURIComponent(id)}`, auth, deadline);
      const { deprecation, sunset } = response.headers;
      if (onDeprecation && (typeof deprecation === 'string' || typeof sunset === 'string')) {
        onDeprecation({
          ...(typeof deprecation === 'string' ? { deprecation: deprecation.slice(0, 100) } : {}),
          ...(typeof sunset === 'string' ? { sunset: sunset.slice(0, 100) } : {}),
        });
      }
      if (response.status !== 200) fail(response);
      return parsePet(response.text);
    },
    async createPet(auth, pet, deadline) {
      if (deadline === undefined) return withOwnDeadline((own) => client.createPet(auth, pet, own));
      const response = await call('POST /pets', '/pets', auth, serializeNewPet(pet), deadline);
      if (response.status !== 201 && response.status !== 200) fail(response);
      return parsePet(response.text);
    },
    deadline: (ms) => deadlines.create(ms),
    async probe() {
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
    },
    get breakerState() {
      return breaker.state;
    },
    close: () => pool.close(),
  };
  return client;
}

/** Waits `ms`, or fails as a timeout as soon as the scope expires. */
function pause(ms: number, scope: CallScope): Promise<void> {
  return new Promise((resolve, reject) => {
    const forget = scope.onExpire(() => {
      clearTimeout(timer);
      reject(new UpstreamTimeoutError('deadline passed during backoff'));
    });
    const timer = setTimeout(() => {
      forget();
      resolve();
    }, ms);
  });
}

/**
 * One exchange's undici handler (the dispatcher's handler API): it keeps the status and headers,
 * collects the body, and settles once, with the answer or the first failure (its own deadline's
 * included, which aborts the exchange if undici has started it).
 */
class Exchange implements Dispatcher.DispatchHandler {
  settled = false;
  forget: () => void = noop;
  #controller: Dispatcher.DispatchController | undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  readonly #resolve: (response: RawResponse) => void;
  readonly #reject: (error: unknown) => void;

  constructor(resolve: (response: RawResponse) => void, reject: (error: unknown) => void) {
    this.#resolve = resolve;
    this.#reject = reject;
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.forget();
    this.#controller?.abort(error as Error);
    this.#reject(error);
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
    this.#resolve({ status: this.#status, headers: this.#headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.forget();
    this.#reject(error);
  }
}

const noop = () => {};

/** The HTTP method a route template starts with. */
export function methodOf(route: UpstreamRoute): 'GET' | 'POST' {
  return route.startsWith('POST ') ? 'POST' : 'GET';
}

function outcomeOf(error: UpstreamError): AttemptOutcome {
  if (error instanceof UpstreamTimeoutError) return 'timeout';
  if (error instanceof UpstreamBadResponseError) return 'bad_response';
  return 'unavailable';
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function classify(error: unknown, scope: CallScope): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (scope.expired) return new UpstreamTimeoutError('deadline passed', { cause: error });
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code))
    return new UpstreamTimeoutError(code, { cause: error });
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new UpstreamBadResponseError(code, { cause: error });
  return new UpstreamUnavailableError(typeof code === 'string' ? code : 'network error', { cause: error });
}

/** `Retry-After` as whole seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
