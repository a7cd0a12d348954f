import { setTimeout as sleep } from 'node:timers/promises';
import { type Dispatcher, Pool } from 'undici';
import { type BreakerOptions, type BreakerState, CircuitBreaker } from './breaker.ts';
import { createCallerKey } from './caller-key.ts';
import { createCoalescer } from './coalesce.ts';
import {
  type ListPetsQuery,
  type NewPetDto,
  type PetDto,
  parseErrorBody,
  parsePet,
  parsePets,
  serializeNewPet,
} from './contract.ts';
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

/** One operation's deadline: the signal every call and backoff of the operation honours. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Clears the timer; the signal then never aborts. */
  release(): void;
}

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
  listPets(auth: Authorization, query: ListPetsQuery, deadline?: AbortSignal): Promise<PetDto[]>;
  /**
   * `GET /pets/{petId}` (getPet, deprecated upstream). `onDeprecation` receives the upstream's
   * `Deprecation` / `Sunset` headers when it sends them.
   */
  getPet(
    auth: Authorization,
    id: string,
    deadline?: AbortSignal,
    onDeprecation?: (headers: UpstreamDeprecation) => void,
  ): Promise<PetDto>;
  /** `POST /pets` (createPet). Never retried: a repeated POST could create the pet twice. */
  createPet(auth: Authorization, pet: NewPetDto, deadline?: AbortSignal): Promise<PetDto>;
  /**
   * A fresh whole-operation deadline (`timeoutMs` from now) to share between calls; release it
   * when the operation is over, so its timer does not outlive the request.
   */
  deadline(): Deadline;
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

/** Coalescing keys never leave this process: its own secret is enough. */
const callerKey = createCallerKey();

interface RawResponse {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
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
  const deadline = (): Deadline => {
    // Not AbortSignal.timeout: its timer cannot be cleared, so every request's timer (and V8's
    // bookkeeping for it) stayed alive for the full timeout after the answer was sent.
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')),
      timeoutMs,
    );
    timer.unref();
    deadlines.set(controller.signal, Date.now() + timeoutMs);
    return { signal: controller.signal, release: () => clearTimeout(timer) };
  };
  /** Full-jitter exponential backoff; the deadline cuts it short (as a timeout). */
  const backoff = (attempt: number, signal: AbortSignal) =>
    pause(Math.random() * retryBaseMs * 2 ** attempt, signal);

  async function once(
    route: UpstreamRoute,
    path: string,
    auth: Authorization,
    body: string | undefined,
    signal: AbortSignal,
  ): Promise<RawResponse> {
    const method = methodOf(route);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (auth !== undefined) headers.authorization = auth;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const ends = observers.length === 0 ? undefined : startAttempt(route, headers);
    const started = ends ? performance.now() : 0;
    try {
      const response = await untilAborted(
        pool.request({ method, path: basePath + path, headers, body, signal }),
        signal,
      );
      const text = await response.body.text();
      if (ends) {
        const outcome = response.statusCode < 300 ? 'ok' : 'http_error';
        for (const end of ends)
          end({ outcome, status: response.statusCode, durationMs: performance.now() - started });
      }
      return { status: response.statusCode, headers: response.headers, text };
    } catch (error) {
      const failure = classify(error, signal);
      if (ends) {
        const outcome = outcomeOf(failure);
        for (const end of ends) end({ outcome, durationMs: performance.now() - started });
      }
      throw failure;
    }
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
   * The signal bounds every attempt and every backoff: a slow-drip body cannot stretch it, unlike
   * undici's idle-only bodyTimeout.
   */
  async function call(
    route: UpstreamRoute,
    path: string,
    auth: Authorization,
    body: string | undefined,
    signal: AbortSignal,
  ): Promise<RawResponse> {
    const method = methodOf(route);
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) throw new UpstreamTimeoutError('deadline passed');
      if (!breaker.tryAcquire()) {
        for (const observer of observers) observer.shortCircuit?.(route);
        throw new UpstreamUnavailableError('circuit open');
      }
      let response: RawResponse;
      try {
        response = await once(route, path, auth, body, signal);
      } catch (error) {
        const failure = error as UpstreamError;
        if (failure instanceof UpstreamUnavailableError || failure instanceof UpstreamTimeoutError)
          breaker.onFailure();
        else breaker.onSuccess();
        if (method !== 'GET' || attempt >= maxRetries || !(failure instanceof UpstreamUnavailableError))
          throw failure;
        notifyRetry(route, 'unavailable');
        await backoff(attempt, signal);
        continue;
      }
      const overloaded = response.status === 502 || response.status === 503 || response.status === 504;
      if (overloaded) breaker.onFailure();
      else breaker.onSuccess();
      if (method === 'GET' && attempt < maxRetries) {
        if (overloaded) {
          notifyRetry(route, 'overloaded');
          await backoff(attempt, signal);
          continue;
        }
        if (response.status === 429) {
          const wait = parseRetryAfter(response.headers['retry-after']);
          if (wait !== undefined && fitsBeforeDeadline(wait * 1000, signal)) {
            notifyRetry(route, 'rate_limited');
            await pause(wait * 1000, signal);
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

  // Identical GETs of one caller in flight at once are one request. The key holds the hash of the
  // canonical Authorization header, never the header: two callers never share a call. Not undici's
  // deduplicate interceptor: its key holds every request header verbatim (the token, in a map and on
  // a diagnostics channel), and the first request's abort fails every request that joined it,
  // whereas here each operation keeps its own deadline and the call ends only when all gave up.
  const coalescer =
    options.coalesce === false
      ? undefined
      : createCoalescer((shared, waiters) => {
          // The shared call may wait (for a 429's Retry-After) until the latest waiter's deadline.
          let end = 0;
          for (const waiter of waiters) end = Math.max(end, deadlines.get(waiter) ?? 0);
          if (end > 0) deadlines.set(shared, end);
        });

  /**
   * A GET, shared with the same caller's identical GET when one is in flight. Waiters share only
   * the raw answer (status, headers, text): each parses its own objects, and a failure reaches each
   * as an error of its own.
   */
  function get(route: UpstreamRoute, path: string, auth: Authorization, signal: AbortSignal) {
    if (coalescer === undefined || auth === undefined) return call(route, path, auth, undefined, signal);
    return coalescer
      .run(
        `${callerKey(auth)} ${path}`,
        signal,
        (shared) => {
          const end = deadlines.get(signal);
          if (end !== undefined) deadlines.set(shared.signal, end);
          return call(route, path, auth, undefined, shared.signal);
        },
        () => {
          for (const observer of observers) observer.coalesced?.(route);
        },
      )
      .catch((error: unknown) => {
        throw copyUpstreamError(error);
      });
  }

  /** A call made without an operation's deadline gets one of its own, released when it settles. */
  const withOwnDeadline = async <T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const own = deadline();
    try {
      return await run(own.signal);
    } finally {
      own.release();
    }
  };

  const client: UpstreamClient = {
    async listPets(auth, query, signal) {
      if (signal === undefined) return withOwnDeadline((own) => client.listPets(auth, query, own));
      const status = query.status === undefined ? '' : `&status=${query.status}`;
      const response = await get('GET /pets', `/pets?limit=${query.limit}${status}`, auth, signal);
      if (response.status !== 200) fail(response);
      return parsePets(response.text);
    },
    async getPet(auth, id, signal, onDeprecation) {
      if (signal === undefined) return withOwnDeadline((own) => client.getPet(auth, id, own, onDeprecation));
      const response = await get('GET /pets/{petId}', `/pets/${encodeURIComponent(id)}`, auth, signal);
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
    async createPet(auth, pet, signal) {
      if (signal === undefined) return withOwnDeadline((own) => client.createPet(auth, pet, own));
      const response = await call('POST /pets', '/pets', auth, serializeNewPet(pet), signal);
      if (response.status !== 201 && response.status !== 200) fail(response);
      return parsePet(response.text);
    },
    deadline,
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

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new UpstreamTimeoutError('deadline passed during backoff');
  }
}

/** A signal does not expose when it will abort, so each deadline's end is kept beside it. */
const deadlines = new WeakMap<AbortSignal, number>();

function fitsBeforeDeadline(ms: number, signal: AbortSignal): boolean {
  const end = deadlines.get(signal);
  return end !== undefined && Date.now() + ms < end;
}

/**
 * Settles with `work`, or rejects as soon as `signal` aborts. undici honours the signal once a
 * socket is connected, but not while a connect is still pending (its connect timer is coarse), so a
 * black-holed upstream would otherwise outlive the deadline by up to a second.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      // undici still settles the request later (aborted or connect timeout): nobody waits for it.
      work.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

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

function classify(error: unknown, signal: AbortSignal): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (signal.aborted) return new UpstreamTimeoutError('deadline passed', { cause: error });
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
