import { redisForStore, type SharedRedis, type SharedRedisOptions } from './redis.ts';

/**
 * Where documents registered by automatic persisted queries (APQ) live, by their SHA-256 hex.
 * Bounded by count and by bytes: a caller can only make older registrations go first, never
 * grow the store. A store never rejects: a failed or slow command reads as a miss (the client
 * then sends the document again) or a lost registration, and is counted in `stats.errors`.
 * The manifest of trusted documents is not kept here: nothing a caller registers can evict it.
 */
export interface DocumentStore {
  /** The document registered under `hash`, or undefined when absent, evicted or unreadable. */
  get(hash: string): Promise<string | undefined>;
  /** Registers `document` under `hash` (already verified to be its SHA-256); a lost write is only counted. */
  set(hash: string, document: string): Promise<void>;
  readonly stats: DocumentStoreStats;
  close(): Promise<void>;
}

export interface DocumentStoreStats {
  hits: number;
  misses: number;
  /** Documents written (a document over `maxBytes` on its own is never written). */
  registered: number;
  /** Failed or timed-out commands, and commands not sent because Redis is known down. */
  errors: number;
  /** Of those, the ones refused at once by the shared Redis's open breaker (Redis only). */
  bypassed?: number;
}

export interface DocumentStoreBounds {
  /** Documents kept; the least recently used goes first. @default 1000 */
  maxDocuments?: number;
  /** UTF-8 bytes of hashes and documents together. @default 1048576 */
  maxBytes?: number;
}

export const DEFAULT_APQ_MAX_DOCUMENTS = 1000;
export const DEFAULT_APQ_MAX_BYTES = 1024 * 1024;

/** The bytes one entry counts for: its document and its key, as UTF-8. */
export function entryBytes(hash: string, document: string): number {
  return Buffer.byteLength(hash) + Buffer.byteLength(document);
}

/** An LRU in this process's memory: right for one gateway instance. */
export function createMemoryDocumentStore(bounds: DocumentStoreBounds = {}): DocumentStore {
  const maxDocuments = bounds.maxDocuments ?? DEFAULT_APQ_MAX_DOCUMENTS;
  const maxBytes = bounds.maxBytes ?? DEFAULT_APQ_MAX_BYTES;
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, { document: string; bytes: number }>();
  let bytes = 0;
  const stats: DocumentStoreStats = { hits: 0, misses: 0, registered: 0, errors: 0 };
  const remove = (hash: string) => {
    const entry = entries.get(hash);
    if (entry === undefined) return;
    entries.delete(hash);
    bytes -= entry.bytes;
  };
  return {
    async get(hash) {
      const entry = entries.get(hash);
      if (entry === undefined) {
        stats.misses++;
        return undefined;
      }
      stats.hits++;
      entries.delete(hash);
      entries.set(hash, entry);
      return entry.document;
    },
    async set(hash, document) {
      const size = entryBytes(hash, document);
      if (size > maxBytes) return;
      const known = entries.get(hash);
      if (known !== undefined) {
        entries.delete(hash);
        entries.set(hash, known);
        return;
      }
      while (entries.size >= maxDocuments || bytes + size > maxBytes) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        remove(oldest.value);
      }
      entries.set(hash, { document, bytes: size });
      bytes += size;
      stats.registered++;
    },
    stats,
    async close() {
      entries.clear();
      bytes = 0;
    },
  };
}

export interface RedisDocumentStoreOptions extends DocumentStoreBounds {
  /** With a URL: a command without an answer by then counts as an error (a miss). @default 250 */
  commandTimeoutMs?: number;
  /** With a URL. @default 1000 */
  connectTimeoutMs?: number;
  /** With a URL: told when Redis goes down or comes back (see SharedRedis). Must not throw. */
  onStateChange?: SharedRedisOptions['onStateChange'];
  /** Key prefix, so tests (or two gateways on one Redis) keep apart. @default 'pg:apq:v1' */
  prefix?: string;
}

/**
 * Registration in one step on the Redis side, so instances sharing the store agree on its bounds:
 * documents in a hash, their last use in a sorted set (ordered by a counter every instance
 * shares, so no clock skew between them reorders it), the bytes they hold in a key. The least
 * recently used go first until the new one fits. Should the set and the hash ever disagree (keys
 * deleted by hand), the loop ends when the set is empty and the store starts over.
 */
const REGISTER = `
local docs, used, total, clock = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local hash, doc = ARGV[1], ARGV[2]
local maxDocuments, maxBytes = tonumber(ARGV[3]), tonumber(ARGV[4])
if redis.call('HEXISTS', docs, hash) == 1 then
  redis.call('ZADD', used, redis.call('INCR', clock), hash)
  return 0
end
local size = string.len(hash) + string.len(doc)
if size > maxBytes then return 0 end
local bytes = tonumber(redis.call('GET', total) or '0')
local count = redis.call('HLEN', docs)
while count >= maxDocuments or bytes + size > maxBytes do
  local oldest = redis.call('ZPOPMIN', used)
  if #oldest == 0 then
    redis.call('DEL', docs)
    bytes, count = 0, 0
    break
  end
  local length = redis.call('HSTRLEN', docs, oldest[1])
  if redis.call('HDEL', docs, oldest[1]) == 1 then
    bytes = bytes - length - string.len(oldest[1])
    count = count - 1
  end
end
redis.call('HSET', docs, hash, doc)
redis.call('ZADD', used, redis.call('INCR', clock), hash)
redis.call('SET', total, bytes + size)
return 1
`;

/** A lookup, which makes the document the most recently used. */
const LOOK_UP = `
local doc = redis.call('HGET', KEYS[1], ARGV[1])
if doc then redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ARGV[1]) end
return doc
`;

/**
 * Redis, for several gateway instances behind one endpoint: a document registered through one
 * instance is found by the others. Commands go through the shared Redis's breaker (src/stores/redis.ts):
 * with Redis down or frozen, one command waits out its timeout, then every lookup is an immediate
 * miss and every registration is lost (counted), never an error, until Redis answers again. Given
 * a URL, the store opens (and closes) a connection of its own.
 */
export function createRedisDocumentStore(
  source: URL | string | SharedRedis,
  options: RedisDocumentStoreOptions = {},
): DocumentStore {
  const maxDocuments = options.maxDocuments ?? DEFAULT_APQ_MAX_DOCUMENTS;
  const maxBytes = options.maxBytes ?? DEFAULT_APQ_MAX_BYTES;
  const prefix = options.prefix ?? 'pg:apq:v1';
  const keys = [`${prefix}:docs`, `${prefix}:used`, `${prefix}:bytes`, `${prefix}:clock`];
  const stats: DocumentStoreStats = { hits: 0, misses: 0, registered: 0, errors: 0, bypassed: 0 };
  const { redis, owned, failed } = redisForStore(source, options, stats);
  return {
    async get(hash) {
      try {
        const document = await redis.run((client) => client.eval(LOOK_UP, { keys, arguments: [hash] }));
        if (typeof document !== 'string') {
          stats.misses++;
          return undefined;
        }
        stats.hits++;
        return document;
      } catch (error) {
        failed(error);
        return undefined;
      }
    },
    async set(hash, document) {
      try {
        const written = await redis.run((client) =>
          client.eval(REGISTER, {
            keys,
            arguments: [hash, document, String(maxDocuments), String(maxBytes)],
          }),
        );
        if (written === 1) stats.registered++;
      } catch (error) {
        failed(error);
      }
    },
    stats,
    close: async () => {
      if (owned) await redis.close();
    },
  };
}
