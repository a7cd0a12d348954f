import { RateLimiterRes } from 'rate-limiter-flexible';

/** Buckets kept in one process's memory; the oldest change goes first past this many. */
const MAX_MEMORY_BUCKETS = 100_000;

/**
 * A token bucket per key in this process, with rate-limiter-flexible's interface (what
 * cluster-counts.ts serves to workers): `points` held, all restored over `duration` seconds,
 * continuously. A refusal rejects with the points left and the milliseconds until the cost fits.
 */
export class MemoryBuckets {
  readonly #capacity: number;
  readonly #rate: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(options: { points: number; duration: number }) {
    this.#capacity = options.points;
    this.#rate = options.points / (options.duration * 1000);
  }

  #level(key: string, now: number): number {
    const bucket = this.#buckets.get(key);
    if (!bucket) return this.#capacity;
    return Math.min(this.#capacity, bucket.tokens + (now - bucket.at) * this.#rate);
  }

  #set(key: string, tokens: number, now: number): void {
    this.#buckets.delete(key);
    if (tokens >= this.#capacity) return;
    this.#buckets.set(key, { tokens, at: now });
    if (this.#buckets.size > MAX_MEMORY_BUCKETS)
      this.#buckets.delete(this.#buckets.keys().next().value as string);
  }

  consume(key: string, points = 1): Promise<RateLimiterRes> {
    const now = Date.now();
    const tokens = this.#level(key, now);
    if (points > tokens) {
      const msBeforeNext = Math.ceil((points - tokens) / this.#rate);
      return Promise.reject(new RateLimiterRes(tokens, msBeforeNext, points, false));
    }
    this.#set(key, tokens - points, now);
    return Promise.resolve(new RateLimiterRes(tokens - points, 0, points, false));
  }

  reward(key: string, points = 1): Promise<RateLimiterRes> {
    const now = Date.now();
    const tokens = Math.min(this.#capacity, this.#level(key, now) + points);
    this.#set(key, tokens, now);
    return Promise.resolve(new RateLimiterRes(tokens, 0, 0, false));
  }
}
