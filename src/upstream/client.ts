import { type ContractRoute, pathOf, ROUTES } from '../contract/routes.ts';
import type { Authorization } from './authorization.ts';
import {
  type ListPetsQuery,
  listKey,
  type PetDto,
  parseErrorBody,
  parsePet,
  parsePets,
  serializeBody,
  type WriteRequest,
} from './bodies.ts';
import type { BreakerOptions, CircuitBreaker } from './breaker.ts';
import { createCoalescer } from './coalesce.ts';
import { type Deadline, DeadlineList } from './deadline.ts';
import {
  copyUpstreamError,
  isOverloadStatus,
  UpstreamBadResponseError,
  type UpstreamError,
  UpstreamRateLimitedError,
  UpstreamUnavailableError,
} from './errors.ts';
import type { UpstreamObserver } from './observer.ts';
import { createRetryingCaller, parseRetryAfter } from './retry.ts';
import { createTransport, type Done, promised, type RawResponse, type Send } from './transport.ts';

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
  breaker?: Omit<BreakerOptions, 'onStateChange'>;
  /** Metrics, traces and logs watch the upstream through these; none by default. */
  observers?: UpstreamObserver[];
  /**
   * Share one in-flight GET between the operations of one caller that need it at the same time
   * (see coalesce.ts). @default true
   */
  coalesce?: boolean;
}

export type { Deadline } from './deadline.ts';

/** What the upstream announced about a deprecated route (RFC 9745 / RFC 8594 header values). */
export interface UpstreamDeprecation {
  deprecation?: string;
  sunset?: string;
}

/** One typed method per REST operation. Every failure is an `UpstreamError`. */
export interface UpstreamClient {
  /**
   * `GET /pets` (listPets). `era`, when given, is what a shared call must also agree on: the
   * response cache's list generation, so that a read after a write (which changed it, perhaps
   * through another instance) never joins a call sent before it.
   */
  listPets(auth: Authorization, query: ListPetsQuery, deadline?: Deadline, era?: string): Promise<PetDto[]>;
  /**
   * `listPets` in callback form, for a path that holds no promise (the fast lane's one-call plans):
   * the same call, through the same layers; `done` is told once.
   */
  listPetsThen(
    auth: Authorization,
    query: ListPetsQuery,
    deadline: Deadline,
    done: Done<PetDto[]>,
    era?: string,
  ): void;
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
  /**
   * A write (`POST /pets`, or any route that declares what it changes): its answer's pet, or null
   * when the route answers none. Sent once unless the route is idempotent: a repeated POST could
   * create the pet twice.
   */
  write(auth: Authorization, request: WriteRequest, deadline?: Deadline): Promise<PetDto | null>;
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

/**
 * The client, in layers: transport.ts (one exchange over undici, bounded by the call's deadline) →
 * retry.ts (retries and the breaker) → here (coalescing, the routes, their bodies and errors).
 */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const { timeoutMs } = options;
  const observers = options.observers ?? [];
  const deadlines = new DeadlineList(timeoutMs);
  const transport = createTransport({
    baseUrl: options.baseUrl,
    timeoutMs,
    connections: options.connections,
    observers,
  });
  const { call, breaker } = createRetryingCaller(transport, {
    ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    ...(options.retryBaseMs === undefined ? {} : { retryBaseMs: options.retryBaseMs }),
    ...(options.breaker ? { breaker: options.breaker } : {}),
    observers,
  });
  const { get, seal } = coalescedGet(call, observers, options.coalesce !== false);
  const withOwnDeadline = <T>(run: (deadline: Deadline) => Promise<T>) => ownDeadline(deadlines, run);

  const client: UpstreamClient = {
    listPets(auth, query, deadline, era) {
      if (deadline === undefined) return withOwnDeadline((own) => client.listPets(auth, query, own, era));
      return promised((done) => client.listPetsThen(auth, query, deadline, done, era));
    },
    listPetsThen(auth, query, deadline, done, era) {
      get(ROUTES.listPets, `/pets?${listKey(query)}`, auth, deadline, era, (error, response) => {
        if (error !== undefined) return done(error);
        let pets: PetDto[];
        try {
          pets = parsePets(success(response as RawResponse, 200).text);
        } catch (failure) {
          return done(failure as UpstreamError);
        }
        done(undefined, pets);
      });
    },
    async getPet(auth, id, deadline, onDeprecation) {
      if (deadline === undefined)
        return withOwnDeadline((own) => client.getPet(auth, id, own, onDeprecation));
      const response = await promised<RawResponse>((done) =>
        get(ROUTES.getPet, pathOf(ROUTES.getPet, { petId: id }), auth, deadline, undefined, done),
      );
      if (onDeprecation) reportDeprecation(response, onDeprecation);
      return parsePet(success(response, 200).text);
    },
    async write(auth, request, deadline) {
      if (deadline === undefined) return withOwnDeadline((own) => client.write(auth, request, own));
      const { route } = request;
      const path = pathOf(route, request.params);
      let response: RawResponse;
      try {
        response = await promised<RawResponse>((done) =>
          call(route, path, auth, serializeBody(request), deadline, done),
        );
      } finally {
        // Answered, or failed perhaps after the store kept it: either way, what is read from now
        // on is read afresh.
        seal();
      }
      // Any 2xx: the contract names the one it sends (`success.status`), and a 200 means the same.
      if (response.status < 200 || response.status >= 300) fail(response);
      return route.success.answer === 'Pet' ? parsePet(response.text) : null;
    },
    deadline: (ms) => deadlines.create(ms),
    get breakerState() {
      return breaker.state;
    },
    probe: () => transport.probe(),
    close: () => transport.close(),
  };
  return client;
}

/**
 * GETs, each shared with the same caller's identical GET when one is in flight (unless `coalesce`
 * is false). Waiters share only the raw answer (status, headers, text): each parses its own
 * objects, and a failure reaches each as an error of its own.
 */
function coalescedGet(call: Send, observers: readonly UpstreamObserver[], coalesce: boolean) {
  // Identical GETs of one caller in flight at once are one request. The key holds the caller's
  // canonical Authorization header, so two callers never share a call; it lives in this process only
  // while the call is in flight, that is while the request holding the same header is alive (a
  // keyed hash of it would cost an HMAC per call and protect nothing more). Not undici's
  // deduplicate interceptor: its key holds every request header verbatim on a diagnostics channel,
  // and the first request's abort fails every request that joined it, whereas here each operation
  // keeps its own deadline and the call ends only when all gave up.
  const coalescer = coalesce ? createCoalescer(copyUpstreamError) : undefined;
  // One function per route, not one per call.
  const joined = new Map<ContractRoute, () => void>();
  const joinedOn = (route: ContractRoute) => {
    let tell = joined.get(route);
    if (tell === undefined) {
      tell = () => {
        for (const observer of observers) observer.coalesced?.(route.name);
      };
      joined.set(route, tell);
    }
    return tell;
  };
  const get = (
    getRoute: ContractRoute,
    path: string,
    auth: Authorization,
    deadline: Deadline,
    era: string | undefined,
    done: Done<RawResponse>,
  ) => {
    if (coalescer === undefined || auth === undefined)
      return call(getRoute, path, auth, undefined, deadline, done);
    coalescer.run(
      era === undefined ? `${auth} ${path}` : `${auth} ${path} ${era}`,
      deadline,
      (shared, sent: Done<RawResponse>) => call(getRoute, path, auth, undefined, shared, sent),
      done,
      joinedOn(getRoute),
    );
  };
  return { get, seal: () => coalescer?.seal() };
}

/** A call made without an operation's deadline gets one of its own, released when it settles. */
async function ownDeadline<T>(deadlines: DeadlineList, run: (deadline: Deadline) => Promise<T>): Promise<T> {
  const own = deadlines.create();
  try {
    return await run(own);
  } finally {
    own.release();
  }
}

/** The upstream's `Deprecation` / `Sunset` headers, when it sent either, each cut to 100 characters. */
function reportDeprecation(
  response: RawResponse,
  onDeprecation: (headers: UpstreamDeprecation) => void,
): void {
  const { deprecation, sunset } = response.headers;
  if (typeof deprecation !== 'string' && typeof sunset !== 'string') return;
  onDeprecation({
    ...(typeof deprecation === 'string' ? { deprecation: deprecation.slice(0, 100) } : {}),
    ...(typeof sunset === 'string' ? { sunset: sunset.slice(0, 100) } : {}),
  });
}

/** The response when its status is `expected`; else throws the UpstreamError it stands for. */
function success(response: RawResponse, expected: number): RawResponse {
  if (response.status !== expected) fail(response);
  return response;
}

/** Throws the UpstreamError a response that is not the route's success stands for. */
function fail(response: RawResponse): never {
  const retryAfter = parseRetryAfter(response.headers['retry-after']);
  const errorBody =
    response.status >= 400 ? parseErrorBody(response.status, response.text, retryAfter) : undefined;
  if (errorBody) throw errorBody;
  if (response.status === 429) throw new UpstreamRateLimitedError(retryAfter);
  if (isOverloadStatus(response.status)) {
    throw new UpstreamUnavailableError(`status ${response.status}`);
  }
  throw new UpstreamBadResponseError(`unexpected status ${response.status}`);
}
