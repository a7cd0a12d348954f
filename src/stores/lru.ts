/** A bounded map that forgets the least recently used entry first. */
export interface Lru<T, K = string> {
  get(key: K): T | undefined;
  set(key: K, value: T): void;
  delete(key: K): void;
  readonly size: number;
  /** What its entries weigh together, by its `weigh` (0 without one). */
  readonly bytes: number;
}

/** How much an LRU may hold: entries, and bytes as its entries are weighed. */
export interface LruBounds {
  readonly entries: number;
  readonly bytes: number;
}

/**
 * A hit only stamps the entry: it is read on every request the fast lane serves, and re-inserting
 * it (delete, then set, to move it to the end of the Map's order) made the table rebuild itself
 * every few thousand hits. The scan for the stalest entry is paid only when a new key overflows
 * a bound, next to the document's parse, validation and compilation.
 *
 * With `weigh`, `bounds.bytes` holds too: an entry heavier than the whole bound is not kept (and
 * the key's older value goes), so one document cannot empty the table for itself.
 */
export function createLru<T, K = string>(
  bounds: number | LruBounds,
  weigh?: (key: K, value: T) => number,
): Lru<T, K> {
  const max = typeof bounds === 'number' ? bounds : bounds.entries;
  const maxBytes =
    typeof bounds === 'number' || weigh === undefined ? Number.POSITIVE_INFINITY : bounds.bytes;
  const entries = new Map<K, { value: T; used: number; bytes: number }>();
  let clock = 0;
  let bytes = 0;
  const remove = (key: K) => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    bytes -= entry.bytes;
    entries.delete(key);
  };
  const evictStalest = () => {
    let stalest: K | undefined;
    let oldest = Number.POSITIVE_INFINITY;
    for (const [candidate, { used }] of entries) {
      if (used < oldest) {
        oldest = used;
        stalest = candidate;
      }
    }
    if (stalest !== undefined) remove(stalest);
  };
  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      entry.used = ++clock;
      return entry.value;
    },
    set(key, value) {
      const weight = weigh ? weigh(key, value) : 0;
      const entry = entries.get(key);
      if (weight > maxBytes) {
        remove(key);
        return;
      }
      if (entry !== undefined) {
        bytes += weight - entry.bytes;
        Object.assign(entry, { value, used: ++clock, bytes: weight });
      } else {
        entries.set(key, { value, used: ++clock, bytes: weight });
        bytes += weight;
      }
      // The entry just set is the newest, so it is never the one evicted.
      while (entries.size > max || bytes > maxBytes) evictStalest();
    },
    delete: remove,
    get size() {
      return entries.size;
    },
    get bytes() {
      return bytes;
    },
  };
}
