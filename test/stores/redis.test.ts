// @tier integration

import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.ts';
import { createRateLimit, type RateLimit } from '../../src/policy/rate-limit.ts';
import { createSharedRedis, type RedisState, type SharedRedis } from '../../src/stores/redis.ts';
import { createRedisDocumentStore, type DocumentStore } from '../../src/stores/registered-documents.ts';
import { createRedisCache, type ResponseCache } from '../../src/stores/response-cache.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { ListPets } from '../support/operations.ts';
import { haveRedisServer, type RunningRedis, startRedis } from '../support/redis.ts';

const ALICE = 'alice-breaker-token';

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await sleep(20);
  }
  throw new Error(`never ${what}`);
}

// The response cache and the rate limit share one Redis and one breaker: when Redis stops
// answering, one command waits out its timeout and every later one is refused without a socket
// write or a timer, until a background probe finds Redis answering again.
describe.skipIf(!haveRedisServer('redis.test'))('one breaker for every use of Redis', () => {
  let redis: RunningRedis;
  let upstream: FakeUpstream;
  let shared: SharedRedis;
  let cache: ResponseCache;
  let limit: RateLimit;
  let apq: DocumentStore;
  let gateway: RunningGateway;
  const states: RedisState[] = [];
  const metrics = createMetrics();
  const redisGauge = async () =>
    (await metrics.registry.getSingleMetric('pet_gateway_redis_state')?.get())?.values[0]?.value;

  const cacheCommandsWaited = () => cache.stats.errors - (cache.stats.bypassed ?? 0);
  const limitCommandsWaited = () => limit.stats.storeErrors - limit.stats.storeBypassed;
  const listOk = async () => {
    const result = await execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`);
    expect(result.errors).toBeUndefined();
    expect(result.data?.pets.map((pet) => pet.name)).toEqual(['Rex']);
  };

  beforeAll(async () => {
    redis = await startRedis();
    upstream = await startFakeUpstream();
    upstream.tokens.add(ALICE);
    upstream.seed(ALICE, { id: '1', name: 'Rex', categoryId: '9', status: 'available' });
    shared = createSharedRedis(redis.url, {
      commandTimeoutMs: 500,
      probeEveryMs: 100,
      onStateChange: (state) => states.push(state),
    });
    metrics.watchRedis(shared);
    cache = createRedisCache(shared);
    limit = createRateLimit({ perMinute: 1000, store: 'redis', redis: shared });
    apq = createRedisDocumentStore(shared, { prefix: 'test:breaker' });
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      cache: { store: cache, ttlMs: 60_000 },
      gateway: { rateLimit: limit, automaticPersistedQueries: apq },
    });
    await until('connected', () => shared.state === 'up');
  });

  afterAll(async () => {
    await gateway?.close();
    await shared?.close();
    await upstream?.close();
    await redis?.stop();
  });

  it('pays one timeout when Redis freezes, then asks it nothing until it answers again', async () => {
    await listOk();
    await listOk();
    const listsBefore = upstream.requests.length;
    expect(cacheCommandsWaited() + limitCommandsWaited()).toBe(0);

    redis.pause();
    try {
      for (let i = 0; i < 10; i++) await listOk();
      // One command waited and took Redis down; the other requests asked Redis nothing.
      expect(cacheCommandsWaited() + limitCommandsWaited()).toBe(1);
      expect(shared.state).toBe('down');
      expect(await redisGauge()).toBe(2);
      // The APQ store shares the breaker: refused at once, no command sent.
      expect(await apq.get('a'.repeat(64))).toBeUndefined();
      expect(apq.stats.bypassed).toBe(1);
      expect(apq.stats.errors).toBe(1);
      // Cache bypassed: every list went to the upstream.
      expect(upstream.requests.length - listsBefore).toBeGreaterThanOrEqual(10);
    } finally {
      redis.resume();
    }
    await until('back up', () => shared.state === 'up');
    expect(states).toEqual(['up', 'down', 'up']);
    // The APQ store is shared again too.
    await apq.set('b'.repeat(64), '{ __typename }');
    expect(await apq.get('b'.repeat(64))).toBe('{ __typename }');
    expect(await redisGauge()).toBe(0);

    // Shared again: the list cached before the freeze is served from Redis.
    const before = upstream.requests.length;
    await listOk();
    expect(upstream.requests.length).toBe(before);
  });

  it('goes down at once when Redis is killed, and back to shared use when it restarts', async () => {
    states.length = 0;
    await redis.kill();
    await until('down', () => shared.state === 'down');
    const waited = cacheCommandsWaited() + limitCommandsWaited();
    for (let i = 0; i < 5; i++) await listOk();
    expect(cacheCommandsWaited() + limitCommandsWaited()).toBe(waited);

    await redis.restart();
    await until('back up', () => shared.state === 'up');
    expect(states).toEqual(['down', 'up']);
    const before = upstream.requests.length;
    await listOk();
    await listOk();
    // The restarted Redis is empty: one list from the upstream, then the cached one.
    expect(upstream.requests.length).toBe(before + 1);
  });

  it('keeps what an unknown key leaves (its rate-limit counter) to the rate-limit window', async () => {
    const inspect = createClient({ url: redis.url, socket: { reconnectStrategy: false } });
    inspect.on('error', () => {});
    await inspect.connect();
    try {
      await inspect.flushAll();
      for (let i = 0; i < 3; i++) {
        const result = await execute(gateway.url, ListPets, { limit: 5 }, `Bearer junk-breaker-key-${i}`);
        expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      }
      const keys = await inspect.keys('*');
      expect(keys).toHaveLength(3);
      for (const key of keys) {
        expect(key).toMatch(/^pg:rl:v2:[0-9a-f]{64}$/);
        const ttl = await inspect.pTTL(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60_000);
      }
    } finally {
      inspect.destroy();
    }
  });
});
