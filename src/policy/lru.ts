/** A bounded map that forgets the least recently used entry first. */
export interface Lru<T> {
  get(key: string): T | undefined;
  set(key: string, value: T): void;
  readonly size: number;
}

/**
 * A hit only stamps the entry: it is read on every request the fast lane serves, and re-inserting
 * it (delete, then set, to move it to the end of the Map's order) made the table rebuild itself
 * every few thousand hits. The scan for the stalest entry is paid only when a new key overflows
 * the bound, next to the document's parse, validation and compilation.
 */
export function createLru<T>(max: number): Lru<T> {
  const entries = new Map<string, { value: T; used: number }>();
  let clock = 0;
  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      entry.used = ++clock;
      return entry.value;
    },
    set(key, value) {
      const entry = entries.get(key);
      if (entry !== undefined) {
        entry.value = value;
        entry.used = ++clock;
        return;
      }
      entries.set(key, { value, used: ++clock });
      if (entries.size <= max) return;
      let stalest: string | undefined;
      let oldest = Number.POSITIVE_INFINITY;
      for (const [candidate, { used }] of entries) {
        if (used < oldest) {
          oldest = used;
          stalest = candidate;
        }
      }
      if (stalest !== undefined) entries.delete(stalest);
    },
    get size() {
      return entries.size;
    },
  };
}
