import { createHash, createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRateLimit, type RateLimit } from '../../src/http/rate-limit.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { createSharedRedis, type RedisState, type SharedRedis } from '../../src/redis.ts';
import { createCallerKey } from '../../src/upstream/caller-key.ts';
import { ListPets } from '../gateway/operations.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute, postJson } from '../support/graphql.ts';
import { haveRedisServer, type RunningRedis, startRedis } from '../support/redis.ts';

const ALICE = 'alice-limit-token';
const BOB = 'bob-limit-token';

let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  for (const token of [ALICE, BOB]) {
    upstream.tokens.add(token);
    upstream.seed(token, { id: '1', name: 'Rex', categoryId: '9' });
  }
});

afterAll(async () => {
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

/** Sends one `pets` operation; the raw fetch Response, for status and headers. */
async function list(url: string, authorization?: string) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
  };
  if (authorization !== undefined) headers.authorization = authorization;
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: '{ pets(limit: 1) { name } }' }),
  });
  const body = (await response.json()) as { errors?: Array<{ extensions?: Record<string, unknown> }> };
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
}

describe('RATE_LIMIT_PER_MINUTE in memory', () => {
  let gateway: RunningGateway;
  let limit: RateLimit;
  const metrics = createMetrics();

  beforeAll(async () => {
    limit = createRateLimit({ perMinute: 3 });
    metrics.watchRateLimit(limit.stats);
    gateway = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: limit, metrics } });
  });

  afterAll(async () => {
    await gateway.close();
    await limit.close();
  });

  it('refuses the request over the limit with 429, Retry-After and RATE_LIMITED, before any upstream call', async () => {
    for (let i = 0; i < 3; i++) expect((await list(gateway.url, `Bearer ${ALICE}`)).status).toBe(200);
    upstream.requests.length = 0;
    const refused = await list(gateway.url, `Bearer ${ALICE}`);
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    expect(refused.body.errors?.[0]?.extensions).toEqual({
      code: 'RATE_LIMITED',
      retryAfter: Number(refused.retryAfter),
    });
    expect(upstream.requests).toEqual([]);
    expect(await metrics.registry.getSingleMetricAsString('pet_gateway_rate_limited_total')).toContain(
      'pet_gateway_rate_limited_total 1',
    );
  });

  it('counts per key: one spelling of the scheme is one caller, another key has its own minute', async () => {
    expect((await list(gateway.url, `bearer ${ALICE}`)).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await list(gateway.url, `Bearer ${BOB}`)).status).toBe(200);
    expect((await list(gateway.url, `BEARER  ${BOB}`)).status).toBe(429);
  });

  it('never counts requests without a usable key (introspection, or refused as UNAUTHENTICATED)', async () => {
    const fresh = createRateLimit({ perMinute: 1 });
    const other = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: fresh } });
    try {
      for (let i = 0; i < 3; i++) {
        expect((await postJson(other.url, { query: '{ __typename }' })).status).toBe(200);
        const refused = await list(other.url, 'Basic abc');
        expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      }
      expect((await list(other.url, `Bearer ${ALICE}`)).status).toBe(200);
      expect((await list(other.url, `Bearer ${ALICE}`)).status).toBe(429);
    } finally {
      await other.close();
      await fresh.close();
    }
  });

  it('holds in the fast lane: a prepared operation over the limit is refused all the same', async () => {
    const fresh = createRateLimit({ perMinute: 4 });
    const other = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: fresh } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await list(other.url, `Bearer ${ALICE}`)).status);
      const servedFast = other.lanes?.served.fast ?? 0;
      expect(servedFast).toBeGreaterThan(0);
      statuses.push((await list(other.url, `Bearer ${ALICE}`)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      // The fifth was prepared, refused by the fast lane's check and worded by Yoga.
      expect(other.lanes?.served.fast).toBe(servedFast);
    } finally {
      await other.close();
      await fresh.close();
    }
  });
});

describe('RATE_LIMIT_NEW_KEYS_PER_MINUTE: a client sending a new key every time', () => {
  it('lets an address send 3 keys the upstream has not accepted per minute, then refuses the rest before any upstream call; accepted keys go on', async () => {
    const limit = createRateLimit({ perMinute: 100, newKeysPerMinute: 3 });
    const gateway = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: limit } });
    try {
      // Alice's key counts once, until the upstream has accepted it.
      expect((await list(gateway.url, `Bearer ${ALICE}`)).status).toBe(200);
      upstream.requests.length = 0;
      const codes: unknown[] = [];
      for (let i = 0; i < 6; i++) {
        const answer = await list(gateway.url, `Bearer junk-rotating-key-${i}`);
        codes.push(answer.body.errors?.[0]?.extensions?.code);
      }
      expect(codes).toEqual([
        'UNAUTHENTICATED',
        'UNAUTHENTICATED',
        'RATE_LIMITED',
        'RATE_LIMITED',
        'RATE_LIMITED',
        'RATE_LIMITED',
      ]);
      expect(upstream.requests).toHaveLength(2);
      expect(limit.stats.newKeysLimited).toBe(4);
      // A key the upstream accepted is not held back by the rotation from the same address.
      for (let i = 0; i < 3; i++) expect((await list(gateway.url, `Bearer ${ALICE}`)).status).toBe(200);
    } finally {
      await gateway.close();
      await limit.close();
    }
  });
});

const redisAvailable = haveRedisServer('rate-limit.test');

describe.skipIf(!redisAvailable)('RATE_LIMIT_STORE=redis, shared by two instances', () => {
  let redis: RunningRedis;
  let limitA: RateLimit;
  let limitB: RateLimit;
  let limitC: RateLimit;
  let a: RunningGateway;
  let b: RunningGateway;
  let c: RunningGateway;
  let redisA: SharedRedis;
  let redisB: SharedRedis;
  const downs: RedisState[] = [];
  // What REDIS_KEY_SECRET gives every instance; C was started with another.
  const SECRET = 'a-secret-shared-by-instances-a-and-b';
  const OTHER_SECRET = 'another-secret-only-instance-c-has';

  beforeAll(async () => {
    redis = await startRedis();
    const onStateChange = (state: RedisState) => void (state === 'down' && downs.push(state));
    redisA = createSharedRedis(redis.url, { onStateChange });
    redisB = createSharedRedis(redis.url, { onStateChange });
    const shared = { perMinute: 4, store: 'redis', callerKey: createCallerKey(SECRET) } as const;
    limitA = createRateLimit({ ...shared, redis: redisA });
    limitB = createRateLimit({ ...shared, redis: redisB });
    limitC = createRateLimit({ ...shared, callerKey: createCallerKey(OTHER_SECRET), redis: redisB });
    a = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: limitA } });
    b = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: limitB } });
    c = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: limitC } });
    // The connections open in the background: wait until both count in Redis.
    for (let i = 0; i < 250 && (redisA.state !== 'up' || redisB.state !== 'up'); i++) await sleep(20);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await c?.close();
    await limitA?.close();
    await limitB?.close();
    await limitC?.close();
    await redisA?.close();
    await redisB?.close();
    await redis?.stop();
  });

  it('enforces one limit across instances with the same secret, keyed by an HMAC of the key under it', async () => {
    const statuses: number[] = [];
    for (const gateway of [a, b, a, b, a, b])
      statuses.push((await list(gateway.url, `Bearer ${ALICE}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(limitA.stats.storeErrors + limitB.stats.storeErrors).toBe(0);

    const inspect = createClient({ url: redis.url, socket: { reconnectStrategy: false } });
    inspect.on('error', () => {});
    await inspect.connect();
    try {
      const keys = await inspect.keys('*');
      const hmac = createHmac('sha256', SECRET).update(`Bearer ${ALICE}`).digest('hex');
      expect(keys).toEqual([`pg:rl:v2:${hmac}`]);
      // Not what anyone holding a guessed key could check offline: its bare SHA-256.
      const sha256 = createHash('sha256').update(`Bearer ${ALICE}`).digest('hex');
      for (const key of keys) {
        expect(key).not.toContain(sha256);
        expect(key).not.toContain(ALICE);
      }
    } finally {
      inspect.destroy();
    }
  });

  it('an instance with another secret counts under keys of its own: it shares nothing', async () => {
    // ALICE has used her minute on A and B; C, on the same Redis with another secret, starts afresh.
    expect((await list(b.url, `Bearer ${ALICE}`)).status).toBe(429);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await list(c.url, `Bearer ${ALICE}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect(limitC.stats.storeErrors).toBe(0);
  });

  it('decides in memory within ~250 ms when Redis stops answering, and goes back to Redis after', async () => {
    const errorsBefore = limitA.stats.storeErrors;
    redis.pause();
    try {
      const started = performance.now();
      // A key of its own, so the decision taken in A's memory leaves the next test's count alone.
      const answer = await list(a.url, 'Bearer carol-limit-token');
      expect(answer.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(1000);
      expect(limitA.stats.storeErrors).toBe(errorsBefore + 1);
    } finally {
      redis.resume();
    }
    await sleep(50);
    expect((await list(b.url, `Bearer ${ALICE}`)).status).toBe(429);
    expect(limitA.stats.storeErrors + limitB.stats.storeErrors).toBe(errorsBefore + 1);
  });

  it('keeps answering when Redis is down: each instance then limits on its own (fail-open to per-instance)', async () => {
    await redis.stop();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await list(a.url, `Bearer ${BOB}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect((await list(b.url, `Bearer ${BOB}`)).status).toBe(200);
    expect(limitA.stats.storeErrors).toBeGreaterThanOrEqual(5);
    expect(downs.length).toBeGreaterThan(0);
    const pets = await execute(b.url, ListPets, { limit: 1 }, `Bearer ${BOB}`);
    expect(pets.errors).toBeUndefined();
  });
});
