// @tier unit

import { describe, expect, it } from 'vitest';
import { cacheKey, createMemoryCache } from '../../src/stores/response-cache.ts';

/** A list answer as the upstream would send it: `count` pets with 200-emoji names (~1.6 KB a pet). */
function listOf(count: number): string {
  const name = '🐶'.repeat(200);
  return JSON.stringify(
    Array.from({ length: count }, (_, i) => ({
      id: String(i + 1),
      name,
      categoryId: '1',
      status: 'available',
    })),
  );
}

describe('memory response cache: a bound in bytes, and expiry (#39 item 1)', () => {
  it('stays within its byte bound through the issue fill: every status and limit, a new list generation each round', async () => {
    const maxBytes = 8 * 1024 * 1024;
    let now = 0;
    const store = createMemoryCache({ maxBytes, now: () => now });
    const lists = Array.from({ length: 101 }, (_, limit) => listOf(limit));
    let peak = 0;
    for (let round = 0; round < 25; round++) {
      for (const status of ['available', 'pending', 'sold']) {
        for (let limit = 1; limit <= 100; limit++) {
          await store.set(
            cacheKey('caller', 'pets', `gen${round}`, status, String(limit)),
            lists[limit] ?? '',
            2000,
          );
          peak = Math.max(peak, store.stats.bytes ?? Number.POSITIVE_INFINITY);
        }
      }
      now += 10;
    }
    expect(peak).toBeLessThanOrEqual(maxBytes);
    // The most recent answers are kept: the bound evicts the least recently used first.
    expect(await store.get(cacheKey('caller', 'pets', 'gen24', 'sold', '100'))).toBe(lists[100]);
    expect(await store.get(cacheKey('caller', 'pets', 'gen0', 'available', '1'))).toBeUndefined();
  });

  it('drops expired entries without being asked for them', async () => {
    let now = 0;
    const store = createMemoryCache({ maxBytes: 64 * 1024 * 1024, now: () => now });
    for (let limit = 1; limit <= 100; limit++) await store.set(`k${limit}`, listOf(limit), 2000);
    expect(store.stats.bytes).toBeGreaterThan(1_000_000);
    now = 2000;
    // One write after the TTL sweeps what expired; nothing else was read.
    await store.set('fresh', 'x', 2000);
    expect(store.stats.entries).toBe(1);
    expect(store.stats.bytes).toBeLessThan(1024);
  });

  it('counts an entry at twice its UTF-16 length plus a fixed overhead, and refuses one over the bound', async () => {
    const store = createMemoryCache({ maxBytes: 4096 });
    await store.set('a', 'x'.repeat(100), 1000);
    expect(store.stats.bytes).toBe(2 * (1 + 100) + 96);
    await store.set('big', 'x'.repeat(4096), 1000);
    expect(await store.get('big')).toBeUndefined();
    expect(await store.get('a')).toBe('x'.repeat(100));
    await store.set('a', 'y', 1000);
    expect(store.stats.bytes).toBe(2 * (1 + 1) + 96);
  });

  it('keeps the entry cap too', async () => {
    const store = createMemoryCache({ maxEntries: 2 });
    for (const key of ['a', 'b', 'c']) await store.set(key, '1', 1000);
    expect(store.stats.entries).toBe(2);
  });
});
