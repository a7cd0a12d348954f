import { createPointCounter, type PointCounter } from './cluster-counts.ts';
import { RedisUnavailableError, redisForStore, type SharedRedis } from './redis.ts';

/**
 * Keys are `pg:cb:v1:<HMAC of the canonical Authorization header>` (the caller computes them), as
 * the rate limit's are: never the key itself.
 */
const KEY_PREFIX = 'pg:cb:v1';

/**
 * Takes `cost` points from a bucket of `capacity` restored at `rate` points a millisecond since its
 * last change, and gives them back when `cost` is negative (never past `capacity`). Redis's clock,
 * so every instance sees one time. Answers `{taken, tokens left, ms until cost fits}`; a bucket
 * back at capacity is deleted, so idle callers leave nothing behind.
 */
const TAKE = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1]) or capacity
local at = tonumber(held[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate)
if cost > tokens then
  return {0, tostring(tokens), math.ceil((cost - tokens) / rate)}
end
tokens = math.min(capacity, tokens - cost)
if tokens >= capacity then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
  redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate) + 1000)
end
return {1, tostring(tokens), 0}
`;

/** One caller's bucket after a take: whether it was taken, what is left, and when `cost` would fit. */
export interface Take {
  readonly taken: boolean;
  /** Points left once taken (or, refused, before), restored continuously up to the capacity. */
  readonly left: number;
  /** Refused: milliseconds until the bucket holds the cost. */
  readonly waitMs: number;
}

export interface CostBucketsOptions {
  /** Points a bucket holds, and restores in a minute. */
  perMinute: number;
  /** Where buckets live: this process, or Redis shared by every instance. @default 'memory' */
  store?: 'memory' | 'redis';
  /** Required with `store: 'redis'`: the process's shared Redis, or a URL for a connection of its own. */
  redis?: SharedRedis | URL | string;
  /** In a worker (WORKERS > 1): buckets live in the primary, shared by every worker. @default false */
  acrossWorkers?: boolean;
  /** Counted into: takes decided in memory because Redis failed, and of those, without asking it. */
  stats: { errors: number; bypassed?: number };
}

/** Per-key token buckets of points, restored continuously (docs/cost.md, "A budget in points"). */
export interface CostBuckets {
  /** Takes `cost` points of `key`'s bucket, when it holds them. Never rejects. */
  take(key: string, cost: number): Promise<Take>;
  /** Gives `points` back to `key`'s bucket (an operation cost less than its estimate). Never rejects. */
  give(key: string, points: number): void;
  close(): Promise<void>;
}

/**
 * Buckets in Redis, one atomic script per take, shared by every instance; while Redis fails or is
 * slow (its shared breaker), in this process (across its workers), with the same capacity: each
 * instance then holds a caller to the budget on its own, as the rate limit falls back.
 */
export function createCostBuckets(options: CostBucketsOptions): CostBuckets {
  const capacity = options.perMinute;
  const rate = capacity / 60_000;
  const memory = createPointCounter(
    { name: 'cost-budget', points: capacity, duration: 60, kind: 'bucket' },
    options.acrossWorkers ?? false,
  );
  const shared =
    options.store === 'redis'
      ? redisForStore(options.redis ?? fail('a Redis cost budget needs Redis'), {}, options.stats)
      : undefined;
  const inMemory = (key: string, cost: number) => takeFrom(memory, key, cost);
  return {
    async take(key, cost) {
      if (!shared) return inMemory(key, cost);
      try {
        const answer = (await shared.redis.run((client) =>
          client.eval(TAKE, {
            keys: [`${KEY_PREFIX}:${key}`],
            arguments: [`${capacity}`, `${rate}`, `${cost}`],
          }),
        )) as [number, string, number];
        return { taken: answer[0] === 1, left: Number(answer[1]), waitMs: answer[2] };
      } catch (error) {
        shared.failed(error);
        return inMemory(key, cost);
      }
    },
    give(key, points) {
      if (points <= 0) return;
      if (!shared) {
        void memory.reward(key, points).catch(() => undefined);
        return;
      }
      const keys = [`${KEY_PREFIX}:${key}`];
      shared.redis
        .run((client) => client.eval(TAKE, { keys, arguments: [`${capacity}`, `${rate}`, `${-points}`] }))
        .catch((error: unknown) => {
          if (!(error instanceof RedisUnavailableError)) shared.failed(error);
          void memory.reward(key, points).catch(() => undefined);
        });
    },
    close: async () => {
      if (shared?.owned) await shared.redis.close();
    },
  };
}

async function takeFrom(counter: PointCounter, key: string, cost: number): Promise<Take> {
  try {
    const { remainingPoints } = await counter.consume(key, cost);
    return { taken: true, left: remainingPoints, waitMs: 0 };
  } catch (error) {
    const refused = error as { remainingPoints?: number; msBeforeNext?: number };
    return { taken: false, left: refused.remainingPoints ?? 0, waitMs: refused.msBeforeNext ?? 1000 };
  }
}

function fail(message: string): never {
  throw new Error(message);
}
