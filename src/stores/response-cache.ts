import { redisForStore, type SharedRedis, type SharedRedisOptions } from './redis.ts';

/**
 * Where cached upstream answers live: this process's memory, or Redis shared by several instances.
 * A store never rejects: a failed or slow command reads as a miss (or a lost write) and is counted
 * in `stats.errors`, so the cache can make a request slower or less cached, never fail it.
 */
export interface ResponseCache {
  /** The value, or undefined when absent, expired or unreadable; counted as a lookup (hit or miss). */
  get(key: string): Promise<string | undefined>;
  /**
   * The value of a key that is not an answer (a caller's list generation), so not counted as a
   * lookup: `{ value }` (undefined when absent), or undefined when the store could not answer
   * (counted in `errors`, as every failed command is).
   */
  peek(key: string): Promise<{ value: string | undefined } | undefined>;
  /** Stores `value` for `ttlMs`; a lost write is only counted. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /** Forgets the key (a write changed what it held); a lost delete is only counted. */
  delete(key: string): Promise<void>;
  /**
   * The value at `key`, after storing `value` there (for `ttlMs`) if there was none; atomic, so
   * concurrent callers agree. Undefined when the store could not answer.
   */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<string | undefined>;
  readonly stats: CacheStats;
  close(): Promise<void>;
}

export interface CacheStats {
  hits: number;
  misses: number;
  /**
   * Commands that failed, timed out or were refused because Redis is down (each one fell through to
   * the upstream or was a lost write).
   */
  errors: number;
  /** Of those, the ones refused at once by the open breaker: they cost no wait (Redis only). */
  bypassed?: number;
}

/**
 * `pg:v2:<caller>:<rest>`: the version changes whenever the shape of keys or values does, so old
 * entries are never read again and simply expire (v2: the caller is an HMAC of the key).
 */
export function cacheKey(caller: string, ...rest: string[]): string {
  return ['pg', 'v2', caller, ...rest].join(':');
}

export interface MemoryCacheOptions {
  /** Entries kept; the least recently used goes first. @default 10000 */
  maxEntries?: number;
  /**
   * Bytes kept, counted as an entry's UTF-16 size (two bytes a code unit of key and value, what V8
   * holds at most) plus {@link ENTRY_OVERHEAD_BYTES}; the least recently used goes first, and an
   * entry larger than the bound is not kept. @default 67108864 (64 MiB)
   */
  maxBytes?: number;
  /** How often entries past their TTL are dropped, read or not (also checked on each write). @default 1000 */
  sweepMs?: number;
  /** Milliseconds clock, injectable for tests. @default Date.now */
  now?: () => number;
}

/** What one entry costs beside its strings: the Map slot, the entry object, two string headers. */
export const ENTRY_OVERHEAD_BYTES = 96;

/** The memory cache's default bound in bytes (RESPONSE_CACHE_MAX_BYTES). */
export const DEFAULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/** What the memory cache holds now, beside the lookups: entries and their counted bytes. */
export interface MemoryCacheStats extends CacheStats {
  entries: number;
  bytes: number;
}

const sizeOf = (key: string, value: string) => 2 * (key.length + value.length) + ENTRY_OVERHEAD_BYTES;

/**
 * A bounded, expiring LRU in this process's memory: right for one gateway instance. Bounded by
 * entries and by bytes, since one upstream list may be a megabyte: a cap on entries alone let 10,000
 * large lists hold gigabytes. Expired entries are swept on a timer and on writes, not only when read,
 * so a burst of answers nobody asks for again is given back after its TTL.
 */
export function createMemoryCache(options: MemoryCacheOptions = {}): ResponseCache & {
  readonly stats: MemoryCacheStats;
} {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxBytes = options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES;
  const sweepMs = options.sweepMs ?? 1000;
  const now = options.now ?? Date.now;
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, { value: string; expiresAt: number; bytes: number }>();
  const stats: MemoryCacheStats = { hits: 0, misses: 0, errors: 0, entries: 0, bytes: 0 };
  let nextSweep = now() + sweepMs;

  const drop = (key: string) => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entries.delete(key);
    stats.bytes -= entry.bytes;
    stats.entries = entries.size;
  };
  const sweep = () => {
    const at = now();
    nextSweep = at + sweepMs;
    for (const [key, entry] of entries) if (entry.expiresAt <= at) drop(key);
  };
  const timer = setInterval(sweep, sweepMs);
  timer.unref();

  const read = (key: string) => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now()) {
      drop(key);
      return undefined;
    }
    entries.delete(key);
    entries.set(key, entry);
    return entry.value;
  };
  const write = (key: string, value: string, ttlMs: number) => {
    if (now() >= nextSweep) sweep();
    drop(key);
    const bytes = sizeOf(key, value);
    if (bytes > maxBytes) return;
    entries.set(key, { value, expiresAt: now() + ttlMs, bytes });
    stats.bytes += bytes;
    stats.entries = entries.size;
    while (entries.size > maxEntries || stats.bytes > maxBytes) {
      const oldest = entries.keys().next();
      if (oldest.done) break;
      drop(oldest.value);
    }
  };

  return withStats(read, write, drop, stats, () => {
    clearInterval(timer);
    entries.clear();
    stats.entries = 0;
    stats.bytes = 0;
  });
}

/** The ResponseCache interface over an in-process store's `read` and `write`, counting hits and misses. */
function withStats(
  read: (key: string) => string | undefined,
  write: (key: string, value: string, ttlMs: number) => void,
  drop: (key: string) => void,
  stats: MemoryCacheStats,
  close: () => void,
): ResponseCache & { readonly stats: MemoryCacheStats } {
  return {
    async get(key) {
      const value = read(key);
      if (value === undefined) stats.misses++;
      else stats.hits++;
      return value;
    },
    async peek(key) {
      return { value: read(key) };
    },
    async set(key, value, ttlMs) {
      write(key, value, ttlMs);
    },
    async delete(key) {
      drop(key);
    },
    async setIfAbsent(key, value, ttlMs) {
      const current = read(key);
      if (current !== undefined) return current;
      write(key, value, ttlMs);
      return value;
    },
    stats,
    async close() {
      close();
    },
  };
}

export interface RedisCacheOptions {
  /** With a URL: a command without an answer by then counts as an error (a miss). @default 250 */
  commandTimeoutMs?: number;
  /** With a URL. @default 1000 */
  connectTimeoutMs?: number;
  /** With a URL: told when Redis goes down or comes back (see SharedRedis). Must not throw. */
  onStateChange?: SharedRedisOptions['onStateChange'];
}

/**
 * Redis through node-redis, for several gateway instances sharing one cache. Every command goes
 * through the shared Redis's breaker (src/stores/redis.ts): the first failure or timeout costs one wait of
 * `commandTimeoutMs`, then every lookup is an immediate miss until a background probe finds Redis
 * answering again. Given a URL, the cache opens (and closes) a connection of its own.
 */
export function createRedisCache(
  source: URL | string | SharedRedis,
  options: RedisCacheOptions = {},
): ResponseCache {
  const stats: CacheStats = { hits: 0, misses: 0, errors: 0, bypassed: 0 };
  const { redis, owned, failed } = redisForStore(source, options, stats);

  return {
    async get(key) {
      try {
        const value = await redis.run((client) => client.get(key));
        if (value === null) stats.misses++;
        else stats.hits++;
        return value ?? undefined;
      } catch (error) {
        failed(error);
        return undefined;
      }
    },
    async peek(key) {
      try {
        const value = await redis.run((client) => client.get(key));
        return { value: value ?? undefined };
      } catch (error) {
        failed(error);
        return undefined;
      }
    },
    async set(key, value, ttlMs) {
      try {
        await redis.run((client) => client.set(key, value, { expiration: { type: 'PX', value: ttlMs } }));
      } catch (error) {
        failed(error);
      }
    },
    async delete(key) {
      try {
        await redis.run((client) => client.del(key));
      } catch (error) {
        failed(error);
      }
    },
    async setIfAbsent(key, value, ttlMs) {
      try {
        const replies = await redis.run((client) =>
          client
            .multi()
            .set(key, value, { expiration: { type: 'PX', value: ttlMs }, condition: 'NX' })
            .get(key)
            .exec(),
        );
        const got = replies[1];
        return typeof got === 'string' ? got : undefined;
      } catch (error) {
        failed(error);
        return undefined;
      }
    },
    stats,
    close: async () => {
      if (owned) await redis.close();
    },
  };
}
