import type { IncomingMessage } from 'node:http';
import type { GraphQLError } from 'graphql';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { rateLimited, refusedKeysLimited } from '../schema/errors.ts';
import { createPointCounter } from '../stores/cluster-counts.ts';
import { createMinuteCounts, type RateLimitStats, secondsLeft } from '../stores/rate-limit-counts.ts';
import type { SharedRedis } from '../stores/redis.ts';
import { bearerAuthorization } from '../upstream/authorization.ts';
import { type CallerKey, createCallerKey } from '../upstream/caller-key.ts';
import type { UpstreamObserver } from '../upstream/observer.ts';
import { type AcceptedKeys, createAcceptedKeys } from './accepted-keys.ts';

/** Whether one GraphQL request may run. */
export type RateLimitDecision =
  | { limited: false }
  /**
   * `key`: the caller's key used up its minute. `address`: requests without a key from its address
   * did. `refused_keys`: its address sent too many keys the upstream refused. `budget`: the
   * caller's budget in points does not hold the operation's cost (policy/cost-budget.ts).
   */
  | { limited: true; retryAfterSeconds: number; reason: 'key' | 'address' | 'refused_keys' | 'budget' };

/**
 * The per-API-key limit on GraphQL requests. Consulted once per request, whichever lane serves it:
 * the decision is kept per Node request, so a request the fast lane hands to Yoga (refused, or with
 * errors to word) is never counted twice.
 */
export interface RateLimit {
  /**
   * The decision for one request: the first call for `req` consumes a point of the caller's
   * minute, later calls for the same `req` return that decision. An operation of a batch passes
   * its `entry` (any object of its own): each entry is decided, and counted, on its own. Requests
   * without a usable bearer key count against their client address instead (introspection, and
   * requests refused UNAUTHENTICATED), `perMinute` per address, in this process. Never rejects.
   */
  check(
    req: IncomingMessage | undefined,
    authorization: string | null | undefined,
    entry?: object,
  ): Promise<RateLimitDecision>;
  readonly stats: RateLimitStats;
  /** Learns from the upstream which keys it accepts (pass it to the upstream client's observers). */
  readonly observer: UpstreamObserver;
  close(): Promise<void>;
}

export interface RateLimitOptions {
  /** GraphQL requests one API key may send per minute. */
  perMinute: number;
  /**
   * Keys the upstream refused (401) per client address per minute, keys still being checked
   * included: what bounds a client that sends a new key with every request. Keys the upstream
   * accepted never count. @default 60
   */
  refusedKeysPerMinute?: number;
  /** The client address of a request (the peer, or the forwarded client behind a trusted proxy). */
  clientAddress?: (req: IncomingMessage) => string;
  /** Where the counts live: this process, or Redis shared by every instance. @default 'memory' */
  store?: 'memory' | 'redis';
  /**
   * Required with `store: 'redis'`: the process's shared Redis (its breaker decides when to stop
   * asking), or a URL for a connection of the limit's own.
   */
  redis?: SharedRedis | URL | string;
  /**
   * Names the caller in keys: with `store: 'redis'`, the same secret on every instance, or each
   * counts on its own. @default keyed by this process's random secret
   */
  callerKey?: CallerKey;
  /**
   * In a worker (WORKERS > 1): count in the primary, shared by every worker, so the limit is the
   * setting whatever WORKERS is (stores/cluster-counts.ts). With it, `callerKey` must be the same in
   * every worker. @default false
   */
  acrossWorkers?: boolean;
  /**
   * The keys the upstream accepted, when shared with `/mcp`'s key check: whoever passes it feeds it
   * the upstream's answers (its own observer). @default a memory of the limit's own, fed by `observer`
   */
  acceptedKeys?: AcceptedKeys;
}

const ALLOWED: RateLimitDecision = Object.freeze({ limited: false });

/**
 * What a refused request is told, wherever it came in (/graphql, a batch entry, a WebSocket
 * operation, an MCP message): its code, message, `retryAfter` and HTTP status and `Retry-After`.
 */
export function refusalOf(decision: Extract<RateLimitDecision, { limited: true }>): GraphQLError {
  return decision.reason === 'refused_keys'
    ? refusedKeysLimited(decision.retryAfterSeconds)
    : rateLimited(decision.retryAfterSeconds, decision.reason);
}

/** Keys being checked, remembered per process (oldest first out). */
const MAX_CHECKING_KEYS = 10_000;

/**
 * Requests without a key make no upstream call, but each still costs parsing, validation and
 * (introspection) a large answer: unlimited, a few keyless clients slowed every keyed caller. They
 * count against their client address, `perMinute` a minute. In memory only: an address is not a
 * secret to name in Redis, and this needs no sharing to work.
 */
function keylessLimit(
  options: RateLimitOptions,
  addressOf: (req: IncomingMessage) => string,
  stats: RateLimitStats,
): (req: IncomingMessage | undefined) => Promise<RateLimitDecision> {
  const keyless = createPointCounter(
    { name: 'keyless', points: options.perMinute, duration: 60 },
    options.acrossWorkers ?? false,
  );
  return async (req) => {
    try {
      await keyless.consume(req ? addressOf(req) : 'unknown');
      return ALLOWED;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) return ALLOWED;
      stats.limited++;
      return { limited: true, reason: 'address', retryAfterSeconds: secondsLeft(error) };
    }
  };
}

/**
 * Creates the limit: `perMinute` requests per API key per minute, counted where the counts live
 * (stores/rate-limit-counts.ts: this process, or Redis shared by every instance, falling back to this
 * process while Redis fails), and a budget of keys the upstream refused per client address.
 */
export function createRateLimit(options: RateLimitOptions): RateLimit {
  const stats: RateLimitStats = { limited: 0, storeErrors: 0, storeBypassed: 0, refusedKeysLimited: 0 };
  const callerKey = options.callerKey ?? createCallerKey();
  const counts = createMinuteCounts({
    perMinute: options.perMinute,
    acrossWorkers: options.acrossWorkers ?? false,
    ...(options.store ? { store: options.store } : {}),
    ...(options.redis ? { redis: options.redis } : {}),
    stats,
  });
  // Key rotation: each new key has a fresh minute, so the per-key limit alone never slows a client
  // that sends a new key every time. So a key the upstream has not accepted yet takes a point of its
  // address's budget while it is checked; the point is given back when the upstream accepts the key
  // and kept when it refuses it. An address over its budget gets no new key checked (no upstream
  // call) until its minute ends, while keys it already used keep working: callers sharing an
  // address (a NAT, an office) are held back only by refused keys, never by each other's new ones.
  // In memory only: unknown callers leave nothing in Redis beyond the per-key counter.
  const refusedKeys = createPointCounter(
    { name: 'refused-keys', points: options.refusedKeysPerMinute ?? 60, duration: 60 },
    options.acrossWorkers ?? false,
  );
  const addressOf =
    options.clientAddress ?? ((req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown');
  const keylessDecision = keylessLimit(options, addressOf, stats);
  const accepted = options.acceptedKeys ?? createAcceptedKeys();
  const ownMemory = options.acceptedKeys === undefined;
  /**
   * Keys being checked: the address whose point each holds, and whether it got one. Set before the
   * point is taken, so a key's concurrent requests (a burst, a batch's entries) share one point and
   * one answer, and the upstream's acceptance gives back the one point taken.
   */
  const checking = new Map<string, { address: string; refused: Promise<RateLimiterRes | undefined> }>();
  const observer: UpstreamObserver = {
    keyAnswered(auth, ok) {
      if (ownMemory) accepted.observer.keyAnswered?.(auth, ok);
      // Most answers are for keys accepted long ago: nothing is being checked, no name to compute.
      if (checking.size === 0) return;
      const key = callerKey(auth);
      const check = checking.get(key);
      checking.delete(key);
      if (ok && check !== undefined)
        void check.refused.then((refused) => refused === undefined && refusedKeys.reward(check.address, 1));
    },
  };
  /** The key's check: its address's point taken (refused: the budget's answer), or joined. */
  const checkOf = (key: string, req: IncomingMessage | undefined) => {
    const known = checking.get(key);
    if (known) return known;
    const address = req ? addressOf(req) : 'unknown';
    const check = {
      address,
      refused: refusedKeys.consume(address).then(
        () => undefined,
        (error: unknown) => {
          // Not checked after all: the key's next request asks the budget again.
          if (checking.get(key) === check) checking.delete(key);
          return error instanceof RateLimiterRes ? error : undefined;
        },
      ),
    };
    checking.set(key, check);
    if (checking.size > MAX_CHECKING_KEYS) checking.delete(checking.keys().next().value as string);
    return check;
  };
  const consume = async (
    bearer: string,
    key: string,
    req: IncomingMessage | undefined,
  ): Promise<RateLimitDecision> => {
    if (checking.has(key) || !accepted.has(bearer)) {
      const refused = await checkOf(key, req).refused;
      if (refused) {
        stats.limited++;
        stats.refusedKeysLimited++;
        return { limited: true, reason: 'refused_keys', retryAfterSeconds: secondsLeft(refused) };
      }
    }
    const wait = await counts.consume(key);
    if (wait === undefined) return ALLOWED;
    stats.limited++;
    return { limited: true, reason: 'key', retryAfterSeconds: wait };
  };

  const decisions = new WeakMap<object, Promise<RateLimitDecision>>();
  return {
    check(req, authorization, entry) {
      const decidedFor = entry ?? req;
      const known = decidedFor && decisions.get(decidedFor);
      if (known) return known;
      const bearer = bearerAuthorization(authorization).authorization;
      const decision = bearer === undefined ? keylessDecision(req) : consume(bearer, callerKey(bearer), req);
      if (decidedFor) decisions.set(decidedFor, decision);
      return decision;
    },
    stats,
    observer,
    close: () => counts.close(),
  };
}
