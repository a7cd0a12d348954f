import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitStats } from '../../observability/metrics.ts';
import { bearerAuthorization } from '../../schema/authorization.ts';
import { rateLimited, refusedKeysLimited } from '../../schema/errors.ts';
import { createSharedRedis, RedisUnavailableError, type SharedRedis } from '../../stores/redis.ts';
import { type CallerKey, createCallerKey } from '../../upstream/caller-key.ts';
import type { UpstreamObserver } from '../../upstream/client.ts';

/** Whether one GraphQL request may run. */
export type RateLimitDecision =
  | { limited: false }
  /** `key`: the caller's key used up its minute. `refused_keys`: its address sent too many keys the upstream refused. */
  | { limited: true; retryAfterSeconds: number; reason: 'key' | 'refused_keys' };

/**
 * The per-API-key limit on GraphQL requests. Consulted once per request, whichever lane serves it:
 * the decision is kept per Node request, so a request the fast lane hands to Yoga (refused, or with
 * errors to word) is never counted twice.
 */
export interface RateLimit {
  /**
   * The decision for one request: the first call for `req` consumes a point of the caller's
   * minute, later calls for the same `req` return that decision. Requests without a usable bearer
   * key are never counted (they are refused with UNAUTHENTICATED before any upstream call, or are
   * introspection). Never rejects.
   */
  check(
    req: IncomingMessage | undefined,
    authorization: string | null | undefined,
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
}

const ALLOWED: RateLimitDecision = Object.freeze({ limited: false });

/** Keys the upstream accepted, remembered per process (least recently used first out). */
const MAX_ACCEPTED_KEYS = 10_000;

/**
 * Keys are `pg:rl:v2:<HMAC of the canonical Authorization header>`: never the key itself, nor a
 * hash anyone could check a guessed key against (v1 keys, a bare SHA-256, expire with their window).
 */
const KEY_PREFIX = 'pg:rl:v2';

/**
 * Creates the limit: rate-limiter-flexible's fixed-window counter, `perMinute` points per key per
 * 60 s window (the window opens with the key's first request). With Redis the count is one atomic
 * script per request, shared by every instance. When Redis fails or is slow (250 ms, then at once
 * while the shared Redis's breaker is open: see src/stores/redis.ts), the decision falls back to a counter in this process (fail-open to a per-instance limit): each instance then
 * enforces `perMinute` on its own, so the gateway keeps answering and a caller still cannot go
 * unlimited.
 */
export function createRateLimit(options: RateLimitOptions): RateLimit {
  const stats: RateLimitStats = { limited: 0, storeErrors: 0, storeBypassed: 0, refusedKeysLimited: 0 };
  const callerKey = options.callerKey ?? createCallerKey();
  const limits = { points: options.perMinute, duration: 60, keyPrefix: KEY_PREFIX };
  const memory = new RateLimiterMemory(limits);
  // Key rotation: each new key has a fresh minute, so the per-key limit alone never slows a client
  // that sends a new key every time. So a key the upstream has not accepted yet takes a point of its
  // address's budget while it is checked; the point is given back when the upstream accepts the key
  // and kept when it refuses it. An address over its budget gets no new key checked (no upstream
  // call) until its minute ends, while keys it already used keep working: callers sharing an
  // address (a NAT, an office) are held back only by refused keys, never by each other's new ones.
  // In memory only: unknown callers leave nothing in Redis beyond the per-key counter.
  const refusedKeys = new RateLimiterMemory({ points: options.refusedKeysPerMinute ?? 60, duration: 60 });
  const addressOf =
    options.clientAddress ?? ((req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown');
  const accepted = new Map<string, true>();
  /** Keys being checked: the address whose point each holds. */
  const checking = new Map<string, string>();
  const observer: UpstreamObserver = {
    keyAnswered(auth, ok) {
      const key = callerKey(auth);
      const address = checking.get(key);
      checking.delete(key);
      accepted.delete(key);
      if (!ok) return;
      if (address !== undefined) void refusedKeys.reward(address, 1);
      accepted.set(key, true);
      if (accepted.size > MAX_ACCEPTED_KEYS) accepted.delete(accepted.keys().next().value as string);
    },
  };
  let redis: SharedRedis | undefined;
  let owned = false;
  let shared: RateLimiterRedis | undefined;
  if (options.store === 'redis') {
    if (options.redis === undefined) throw new Error('a Redis rate limit needs Redis');
    owned = typeof options.redis === 'string' || options.redis instanceof URL;
    redis = owned ? createSharedRedis(options.redis as URL | string) : (options.redis as SharedRedis);
    shared = new RateLimiterRedis({
      ...limits,
      storeClient: redis.client,
      useRedisPackage: true,
      // Fail at once while disconnected instead of waiting for a command that cannot be sent.
      rejectIfRedisNotReady: true,
    });
  }
  const isDecision = (error: unknown) => error instanceof RateLimiterRes;

  const consume = async (key: string, req: IncomingMessage | undefined): Promise<RateLimitDecision> => {
    let reason: 'key' | 'refused_keys' = 'key';
    try {
      if (!accepted.has(key) && !checking.has(key)) {
        const address = req ? addressOf(req) : 'unknown';
        reason = 'refused_keys';
        await refusedKeys.consume(address);
        reason = 'key';
        checking.set(key, address);
        if (checking.size > MAX_ACCEPTED_KEYS) checking.delete(checking.keys().next().value as string);
      }
      if (shared && redis) {
        const limiter = shared;
        try {
          await redis.run(() => limiter.consume(key), isDecision);
          return ALLOWED;
        } catch (error) {
          if (isDecision(error)) throw error;
          stats.storeErrors++;
          if (error instanceof RedisUnavailableError) stats.storeBypassed++;
        }
      }
      await memory.consume(key);
      return ALLOWED;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) return ALLOWED;
      stats.limited++;
      if (reason === 'refused_keys') stats.refusedKeysLimited++;
      return { limited: true, reason, retryAfterSeconds: Math.max(1, Math.ceil(error.msBeforeNext / 1000)) };
    }
  };

  const decisions = new WeakMap<IncomingMessage, Promise<RateLimitDecision>>();
  return {
    check(req, authorization) {
      const known = req && decisions.get(req);
      if (known) return known;
      const bearer = bearerAuthorization(authorization).authorization;
      const decision = bearer === undefined ? Promise.resolve(ALLOWED) : consume(callerKey(bearer), req);
      if (req) decisions.set(req, decision);
      return decision;
    },
    stats,
    observer,
    close: async () => {
      if (redis && owned) await redis.close();
    },
  };
}

/**
 * Yoga's side of the limit: every GraphQL request is checked once its parameters are read, before
 * its document is parsed or anything runs. A refused request is answered 429 with `Retry-After`.
 */
export function useRateLimit(limit: RateLimit): Plugin {
  return {
    async onParams({ request, context }) {
      const req = (context as { req?: IncomingMessage }).req;
      const decision = await limit.check(req, request.headers.get('authorization'));
      if (decision.limited) {
        throw decision.reason === 'key'
          ? rateLimited(decision.retryAfterSeconds)
          : refusedKeysLimited(decision.retryAfterSeconds);
      }
    },
  };
}
