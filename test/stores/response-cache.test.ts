// @tier integration

import { createHash, createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryCache, createRedisCache, type ResponseCache } from '../../src/stores/response-cache.ts';
import { createCallerKey } from '../../src/upstream/caller-key.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { CreatePet, GetPet, ListPets } from '../support/operations.ts';
import { haveRedisServer, type RunningRedis, startRedis } from '../support/redis.ts';

const ALICE = 'alice-cache-token';
const BOB = 'bob-cache-token';
const TTL_MS = 2000;

const listCalls = (upstream: FakeUpstream) =>
  upstream.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/pets?'));

/** Every key and value written to a store, so the tests can look for the token in them. */
function recording(store: ResponseCache) {
  const written: string[] = [];
  const touched: string[] = [];
  const wrapped: ResponseCache = {
    get: (key) => {
      touched.push(key);
      return store.get(key);
    },
    peek: (key) => {
      touched.push(key);
      return store.peek(key);
    },
    set: (key, value, ttlMs) => {
      written.push(key, value);
      touched.push(key);
      return store.set(key, value, ttlMs);
    },
    delete: (key) => {
      touched.push(key);
      return store.delete(key);
    },
    setIfAbsent: (key, value, ttlMs) => {
      written.push(key, value);
      touched.push(key);
      return store.setIfAbsent(key, value, ttlMs);
    },
    stats: store.stats,
    close: () => store.close(),
  };
  return { store: wrapped, written, touched };
}

async function seeded(): Promise<FakeUpstream> {
  const upstream = await startFakeUpstream();
  for (const token of [ALICE, BOB]) upstream.tokens.add(token);
  upstream.seed(ALICE, { id: '1', name: 'Rex', categoryId: '9', status: 'available' });
  upstream.seed(BOB, { id: '2', name: 'Tom', categoryId: '9', status: 'available' });
  return upstream;
}

describe('in-memory response cache', () => {
  let upstream: FakeUpstream;
  let gateway: RunningGateway;
  let clock = 1_000_000;
  let spy: ReturnType<typeof recording>;

  beforeAll(async () => {
    upstream = await seeded();
    spy = recording(createMemoryCache({ maxEntries: 100, now: () => clock }));
    gateway = await startGateway({ upstreamUrl: upstream.url, cache: { store: spy.store, ttlMs: TTL_MS } });
  });

  afterAll(async () => {
    await gateway.close();
    await spy.store.close();
    await upstream.close();
  });

  beforeEach(() => {
    clock += 60 * 60 * 1000 + TTL_MS; // every test starts with everything expired
    upstream.requests.length = 0;
    upstream.clearFaults();
  });

  it('answers a repeated pets query within the TTL without an upstream call, and asks again after it', async () => {
    const first = await execute(gateway.url, ListPets, { status: 'AVAILABLE', limit: 5 }, `Bearer ${ALICE}`);
    const second = await execute(gateway.url, ListPets, { status: 'AVAILABLE', limit: 5 }, `Bearer ${ALICE}`);
    expect(second).toEqual({ ...first, text: first.text });
    expect(second.data?.pets.map((pet) => pet.name)).toEqual(['Rex']);
    expect(listCalls(upstream)).toHaveLength(1);

    clock += TTL_MS - 1;
    await execute(gateway.url, ListPets, { status: 'AVAILABLE', limit: 5 }, `Bearer ${ALICE}`);
    expect(listCalls(upstream)).toHaveLength(1);
    clock += 1;
    await execute(gateway.url, ListPets, { status: 'AVAILABLE', limit: 5 }, `Bearer ${ALICE}`);
    expect(listCalls(upstream)).toHaveLength(2);
  });

  it('keys lists by status and limit', async () => {
    await execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`);
    await execute(gateway.url, ListPets, { limit: 6 }, `Bearer ${ALICE}`);
    await execute(gateway.url, ListPets, { status: 'SOLD', limit: 5 }, `Bearer ${ALICE}`);
    expect(listCalls(upstream)).toHaveLength(3);
  });

  it('never gives one token’s entry to another', async () => {
    await execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`);
    const bob = await execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${BOB}`);
    expect(bob.data?.pets.map((pet) => pet.name)).toEqual(['Tom']);
    expect(listCalls(upstream).map((r) => r.authorization)).toEqual([`Bearer ${ALICE}`, `Bearer ${BOB}`]);
    const alice = await execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`);
    expect(alice.data?.pets.map((pet) => pet.name)).toEqual(['Rex']);
    expect(listCalls(upstream)).toHaveLength(2);
  });

  it('shows a pet the same caller just created at once, with one upstream list call after the create', async () => {
    await execute(gateway.url, ListPets, { limit: 50 }, `Bearer ${ALICE}`);
    await execute(gateway.url, ListPets, { limit: 50 }, `Bearer ${BOB}`);
    const created = await execute(
      gateway.url,
      CreatePet,
      { input: { name: 'Fresh', categoryId: '9', status: 'AVAILABLE' } },
      `Bearer ${ALICE}`,
    );
    expect(created.errors).toBeUndefined();
    upstream.requests.length = 0;

    const after = await execute(gateway.url, ListPets, { limit: 50 }, `Bearer ${ALICE}`);
    expect(after.data?.pets.map((pet) => pet.name)).toContain('Fresh');
    await execute(gateway.url, ListPets, { limit: 50 }, `Bearer ${ALICE}`);
    expect(listCalls(upstream)).toHaveLength(1);
    // Bob's cached list is his own and untouched by Alice's create.
    await execute(gateway.url, ListPets, { limit: 50 }, `Bearer ${BOB}`);
    expect(listCalls(upstream)).toHaveLength(1);
  });

  it('caches pet(id) with the upstream’s deprecation headers, and never caches an error', async () => {
    upstream.fault(
      /^\/v1\/pets\/1$/,
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', deprecation: '@1764892800' });
        res.end('{"id":1,"name":"Rex","categoryId":9}');
      },
      1,
    );
    const first = await execute(gateway.url, GetPet, { id: '1' }, `Bearer ${ALICE}`);
    const second = await execute(gateway.url, GetPet, { id: '1' }, `Bearer ${ALICE}`);
    expect(second.data).toEqual(first.data);
    expect(JSON.parse(second.text).extensions.deprecations[0].upstream).toEqual({
      deprecation: '@1764892800',
    });
    expect(upstream.requests).toHaveLength(1);

    upstream.requests.length = 0;
    const missing = await execute(gateway.url, GetPet, { id: '404' }, `Bearer ${ALICE}`);
    await execute(gateway.url, GetPet, { id: '404' }, `Bearer ${ALICE}`);
    expect(missing.errors?.[0]?.extensions?.code).toBe('PET_NOT_FOUND');
    expect(upstream.requests).toHaveLength(2);

    upstream.fault(
      /^\/v1\/pets\?/,
      (_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"code":"INVALID_LIMIT","message":"no","status":400}');
      },
      1,
    );
    const failed = await execute(gateway.url, ListPets, { limit: 7 }, `Bearer ${ALICE}`);
    const retried = await execute(gateway.url, ListPets, { limit: 7 }, `Bearer ${ALICE}`);
    expect(failed.errors?.[0]?.extensions?.code).toBe('INVALID_LIMIT');
    expect(retried.errors).toBeUndefined();
  });

  it('never looks up or stores anything for a caller refused for its Authorization header', async () => {
    spy.touched.length = 0;
    for (const authorization of [undefined, 'Basic abc', `Bearer ${ALICE} extra`]) {
      const result = await execute(gateway.url, ListPets, { limit: 5 }, authorization);
      expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect(spy.touched).toEqual([]);
    expect(upstream.requests).toEqual([]);
  });

  it('writes nothing for a well-formed key the upstream refuses (pets, pet): junk keys cannot flush the cache', async () => {
    const before = spy.written.length;
    for (let i = 0; i < 5; i++) {
      const list = await execute(gateway.url, ListPets, { limit: 5 }, `Bearer junk-cache-key-${i}`);
      expect(list.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      const pet = await execute(gateway.url, GetPet, { id: '1' }, `Bearer junk-cache-key-${i}`);
      expect(pet.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect(spy.written.slice(before)).toEqual([]);
  });

  it('keeps the token out of every key and value; keys are pg:v2:<HMAC-SHA256 hex>:…', () => {
    expect(spy.written.length).toBeGreaterThan(0);
    for (const text of spy.written) {
      expect(text).not.toContain(ALICE);
      expect(text).not.toContain(BOB);
      expect(text).not.toContain('Bearer');
    }
    const keys = spy.written.filter((_text, index) => index % 2 === 0);
    for (const key of keys) expect(key).toMatch(/^pg:v2:[0-9a-f]{64}:(gen|pets:|pet:)/);
  });
});

describe('memory store bounds', () => {
  it('evicts the least recently used entry beyond maxEntries, and expires entries', async () => {
    let now = 0;
    const store = createMemoryCache({ maxEntries: 2, now: () => now });
    await store.set('a', '1', 100);
    await store.set('b', '2', 100);
    expect(await store.get('a')).toBe('1'); // a is now the most recently used
    await store.set('c', '3', 100);
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBe('1');
    now = 100;
    expect(await store.get('c')).toBeUndefined();
    expect(await store.setIfAbsent('g', 'x', 100)).toBe('x');
    expect(await store.setIfAbsent('g', 'y', 100)).toBe('x');
  });
});

const redisAvailable = haveRedisServer('cache.test');

describe.skipIf(!redisAvailable)('Redis response cache shared by two gateway instances', () => {
  let redis: RunningRedis;
  let upstream: FakeUpstream;
  let storeA: ResponseCache;
  let storeB: ResponseCache;
  let storeC: ResponseCache;
  let a: RunningGateway;
  let b: RunningGateway;
  let c: RunningGateway;
  let inspect: ReturnType<typeof createClient>;
  // What REDIS_KEY_SECRET gives A and B; C was started with another.
  const SECRET = 'a-secret-shared-by-instances-a-and-b';

  /** Waits until the store's background connection is up, so the first lookups are not misses. */
  async function connected(store: ResponseCache) {
    for (let i = 0; i < 100; i++) {
      if ((await store.setIfAbsent('pg:test:ready', '1', 1000)) !== undefined) return;
      await sleep(20);
    }
    throw new Error('Redis store never connected');
  }

  beforeAll(async () => {
    redis = await startRedis();
    upstream = await seeded();
    storeA = createRedisCache(redis.url);
    storeB = createRedisCache(redis.url);
    await Promise.all([connected(storeA), connected(storeB)]);
    // Two instances started with the same REDIS_KEY_SECRET.
    const callerKey = createCallerKey(SECRET);
    a = await startGateway({ upstreamUrl: upstream.url, cache: { store: storeA, ttlMs: 10_000, callerKey } });
    b = await startGateway({ upstreamUrl: upstream.url, cache: { store: storeB, ttlMs: 10_000, callerKey } });
    storeC = createRedisCache(redis.url);
    await connected(storeC);
    const otherKey = createCallerKey('another-secret-only-instance-c-has');
    c = await startGateway({
      upstreamUrl: upstream.url,
      cache: { store: storeC, ttlMs: 10_000, callerKey: otherKey },
    });
    inspect = createClient({ url: redis.url, socket: { reconnectStrategy: false } });
    inspect.on('error', () => {});
    await inspect.connect();
  });

  afterAll(async () => {
    if (inspect?.isOpen) inspect.destroy();
    await a?.close();
    await b?.close();
    await c?.close();
    await storeA?.close();
    await storeB?.close();
    await storeC?.close();
    await upstream?.close();
    await redis?.stop();
  });

  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('shares one caller’s cached list between instances', async () => {
    const viaA = await execute(a.url, ListPets, { limit: 20 }, `Bearer ${ALICE}`);
    const viaB = await execute(b.url, ListPets, { limit: 20 }, `Bearer ${ALICE}`);
    expect(viaB.data).toEqual(viaA.data);
    expect(listCalls(upstream)).toHaveLength(1);
  });

  it('shows a create made through instance B in instance A’s next pets at once', async () => {
    await execute(a.url, ListPets, { limit: 20 }, `Bearer ${ALICE}`);
    const created = await execute(
      b.url,
      CreatePet,
      { input: { name: 'Across', categoryId: '9' } },
      `Bearer ${ALICE}`,
    );
    expect(created.errors).toBeUndefined();
    upstream.requests.length = 0;
    const viaA = await execute(a.url, ListPets, { limit: 20 }, `Bearer ${ALICE}`);
    expect(viaA.data?.pets.map((pet) => pet.name)).toContain('Across');
    expect(listCalls(upstream)).toHaveLength(1);
  });

  it('never lets two tokens share an entry, and keeps tokens out of Redis', async () => {
    await execute(a.url, ListPets, { limit: 30 }, `Bearer ${ALICE}`);
    const bob = await execute(b.url, ListPets, { limit: 30 }, `Bearer ${BOB}`);
    expect(bob.data?.pets.map((pet) => pet.name)).toEqual(['Tom']);
    expect(listCalls(upstream).map((r) => r.authorization)).toEqual([`Bearer ${ALICE}`, `Bearer ${BOB}`]);

    const keys = (await inspect.keys('pg:v2:*')).sort();
    const callers = new Set(keys.map((key) => key.split(':')[2]));
    // Each caller named by the HMAC of its header under the instances' secret, not by its bare
    // SHA-256 (which anyone reading Redis could check a guessed key against).
    const hmac = (token: string) => createHmac('sha256', SECRET).update(`Bearer ${token}`).digest('hex');
    expect(callers).toEqual(new Set([hmac(ALICE), hmac(BOB)]));
    const sha256 = (token: string) => createHash('sha256').update(`Bearer ${token}`).digest('hex');
    for (const key of keys) {
      expect(key).toMatch(/^pg:v2:[0-9a-f]{64}:(gen|pets:|pet:)/);
      expect(key).not.toContain(sha256(ALICE));
      expect(key).not.toContain(sha256(BOB));
      const value = (await inspect.get(key)) ?? '';
      for (const text of [key, value]) {
        expect(text).not.toContain(ALICE);
        expect(text).not.toContain(BOB);
        expect(text).not.toContain('Bearer');
      }
    }
    const bobLists = keys.filter((key) => key.includes(':pets:') && key.endsWith(':limit=30'));
    expect(bobLists).toHaveLength(2);
  });

  it('an instance with another secret shares nothing: it asks the upstream itself', async () => {
    await execute(a.url, ListPets, { limit: 25 }, `Bearer ${ALICE}`);
    await execute(b.url, ListPets, { limit: 25 }, `Bearer ${ALICE}`);
    expect(listCalls(upstream)).toHaveLength(1);
    const viaC = await execute(c.url, ListPets, { limit: 25 }, `Bearer ${ALICE}`);
    expect(viaC.errors).toBeUndefined();
    expect(listCalls(upstream)).toHaveLength(2);
    // And then from its own entry.
    await execute(c.url, ListPets, { limit: 25 }, `Bearer ${ALICE}`);
    expect(listCalls(upstream)).toHaveLength(2);
  });

  it('leaves nothing in Redis for keys the upstream refuses', async () => {
    await inspect.flushAll();
    for (let i = 0; i < 5; i++) {
      const result = await execute(a.url, ListPets, { limit: 5 }, `Bearer junk-redis-key-${i}`);
      expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect(await inspect.keys('*')).toEqual([]);
  });

  it('falls back to the upstream, without errors, when Redis goes away', async () => {
    await redis.kill();
    for (const gateway of [a, b, a]) {
      const result = await execute(gateway.url, ListPets, { limit: 20 }, `Bearer ${ALICE}`);
      expect(result.errors).toBeUndefined();
      expect(result.data?.pets.map((pet) => pet.name)).toContain('Rex');
    }
    const created = await execute(
      a.url,
      CreatePet,
      { input: { name: 'Offline', categoryId: '9' } },
      `Bearer ${ALICE}`,
    );
    expect(created.errors).toBeUndefined();
    expect(listCalls(upstream)).toHaveLength(3);
    expect(storeA.stats.errors + storeB.stats.errors).toBeGreaterThan(0);
  });
});
