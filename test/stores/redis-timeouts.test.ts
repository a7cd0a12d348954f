// @tier integration

import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisCache, type ResponseCache } from '../../src/stores/response-cache.ts';
import { haveRedisServer, type RunningRedis, startRedis } from '../support/redis.ts';

// node-redis stops timing a command once it is written to the socket; a Redis that keeps its
// connections but answers nothing (overloaded, paused) must still cost the cache one short wait.

describe.skipIf(!haveRedisServer('redis-timeouts.test'))(
  'Redis response cache against a Redis that stops answering',
  () => {
    let redis: RunningRedis;
    let store: ResponseCache;

    beforeAll(async () => {
      redis = await startRedis();
      store = createRedisCache(redis.url, { commandTimeoutMs: 100 });
      for (let i = 0; i < 100 && (await store.setIfAbsent('pg:test:ready', '1', 1000)) === undefined; i++)
        await sleep(20);
    });

    afterAll(async () => {
      await store?.close();
      await redis?.stop();
    });

    it('reads a miss after commandTimeoutMs, then misses at once without asking, and reads again once Redis answers', async () => {
      await store.set('pg:test:key', 'value', 10_000);
      expect(await store.get('pg:test:key')).toBe('value');
      const errors = store.stats.errors;
      const bypassed = store.stats.bypassed ?? 0;
      redis.pause();
      try {
        const started = performance.now();
        expect(await store.get('pg:test:key')).toBeUndefined();
        expect(await store.setIfAbsent('pg:test:other', 'x', 1000)).toBeUndefined();
        expect(performance.now() - started).toBeLessThan(600);
        // The first waited and opened the breaker; the second was refused without a command.
        expect(store.stats.errors).toBe(errors + 2);
        expect(store.stats.bypassed).toBe(bypassed + 1);
      } finally {
        redis.resume();
      }
      // The breaker's background probe finds Redis again (every second).
      let value: string | undefined;
      for (let i = 0; i < 150 && value === undefined; i++) {
        value = await store.get('pg:test:key');
        if (value === undefined) await sleep(20);
      }
      expect(value).toBe('value');
    });
  },
);
