import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { createPointCounter } from './cluster-counts.ts';
import { createSharedRedis, RedisUnavailableError, type SharedRedis } from './redis.ts';

/**
 * Keys are `pg:rl:v2:<HMAC of the canonical Authorization header>` (the caller computes them):
 * never the key itself, nor a hash anyone could check a guessed key against (v1 keys, a bare
 * SHA-256, expire with their window).
 */
const KEY_PREFIX = 'pg:rl:v2';

/** What the rate limit counts, for /metrics. */
export interface RateLimitStats {
  /** Requests refused with RATE_LIMITED. */
  limited: number;
  /** Decisions the in-process fallback took because Redis did not answer or was known down. */
  storeErrors: number;
  /** Of those, the ones refused at once by the open breaker: they cost no wait. */
  storeBypassed: number;
  /** Of `limited`, requests refused because their address sent too many keys the upstream refused. */
  refusedKeysLimited: number;
}

export interface MinuteCountsOptions {
  /** Points each key has per minute. */
  perMinute: number;
  /** Where the counts live: this process, or Redis shared by every instance. @default 'memory' */
  store?: 'memory' | 'redis';
  /**
   * Required with `store: 'redis'`: the process's shared Redis (its breaker decides when to stop
   * asking), or a URL for a connection of the counts' own.
   */
  redis?: SharedRedis | URL | string;
  /**
   * In a worker (WORKERS > 1), keep the in-memory counts in the primary, shared by every worker
   * (cluster-counts.ts). @default false
   */
  acrossWorkers?: boolean;
  /** Counted into: decisions taken in memory because Redis failed, and of those, without asking it. */
  stats: { storeErrors: number; storeBypassed: number };
}

/** Per-key counts of a fixed one-minute window. */
export interface MinuteCounts {
  /**
   * Takes one of `key`'s points: undefined while it had one left, else the whole seconds (at least
   * 1) until its window ends. Never rejects.
   */
  consume(key: string): Promise<number | undefined>;
  close(): Promise<void>;
}

/**
 * rate-limiter-flexible's fixed-window counter: `perMinute` points per key per 60 s window (the
 * window opens with the key's first point). With Redis the count is one atomic script, shared by
 * every instance. When Redis fails or is slow (250 ms, then at once while the shared Redis's
 * breaker is open: see redis.ts), the count falls back to this process's (fail-open to a
 * per-instance limit): each instance then enforces `perMinute` on its own, so the gateway keeps
 * answering and a caller still cannot go unlimited.
 */
export function createMinuteCounts(options: MinuteCountsOptions): MinuteCounts {
  const { stats } = options;
  const limits = { points: options.perMinute, duration: 60, keyPrefix: KEY_PREFIX };
  const memory = createPointCounter({ name: 'per-key', ...limits }, options.acrossWorkers ?? false);
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

  return {
    async consume(key) {
      try {
        if (shared && redis) {
          const limiter = shared;
          try {
            await redis.run(() => limiter.consume(key), isDecision);
            return undefined;
          } catch (error) {
            if (isDecision(error)) throw error;
            stats.storeErrors++;
            if (error instanceof RedisUnavailableError) stats.storeBypassed++;
          }
        }
        await memory.consume(key);
        return undefined;
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) return undefined;
        return secondsLeft(error);
      }
    },
    close: async () => {
      if (redis && owned) await redis.close();
    },
  };
}

/** Whole seconds until a refused key's window ends, at least 1 (what `Retry-After` says). */
export function secondsLeft(refusal: RateLimiterRes): number {
  return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
}
