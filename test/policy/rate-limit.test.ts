// @tier integration

import { createHash, createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient as createWsClient } from 'graphql-ws';
import { createClient } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClientAddresses } from '../../src/edge/client-address.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { createRateLimit, type RateLimit } from '../../src/policy/rate-limit.ts';
import { createSharedRedis, type RedisState, type SharedRedis } from '../../src/stores/redis.ts';
import { createCallerKey } from '../../src/upstream/caller-key.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute, postJson } from '../support/graphql.ts';
import { ListPets } from '../support/operations.ts';
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
async function list(url: string, authorization?: string, forwardedFor?: string) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
  };
  if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
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

  it('counts requests without a usable key against their address, never against a key (#39 item 2)', async () => {
    const fresh = createRateLimit({ perMinute: 2 });
    const other = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: fresh } });
    try {
      expect((await postJson(other.url, { query: '{ __typename }' })).status).toBe(200);
      const refused = await list(other.url, 'Basic abc');
      expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      const over = await list(other.url, 'Basic abc');
      expect(over.status).toBe(429);
      expect(over.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
      expect((await list(other.url, `Bearer ${ALICE}`)).status).toBe(200);
      expect((await list(other.url, `Bearer ${ALICE}`)).status).toBe(200);
      expect((await list(other.url, `Bearer ${ALICE}`)).status).toBe(429);
    } finally {
      await other.close();
      await fresh.close();
    }
  });

  it('counts every operation on one graphql-ws socket, not the socket once', async () => {
    const fresh = createRateLimit({ perMinute: 3 });
    const other = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: fresh } });
    const client = createWsClient({
      url: other.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${ALICE}` },
      // One socket for every operation, as a front end keeps it (lazy would close it between them).
      lazy: false,
    });
    try {
      const codes: unknown[] = [];
      for (let i = 0; i < 4; i++) {
        const result = (await client.iterate({ query: '{ pets(limit: 1) { name } }' }).next()).value as {
          errors?: Array<{ extensions?: { code?: string } }>;
        };
        codes.push(result.errors ? result.errors[0]?.extensions?.code : 'ok');
      }
      expect(codes).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED']);
      // The socket's operations spent the key's minute: a plain request is refused too.
      expect((await list(other.url, `Bearer ${ALICE}`)).status).toBe(429);
    } finally {
      await client.dispose();
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

/** Runs `task` for 0..count-1, `concurrency` at a time; the results in order. */
async function inBatches<T>(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < count; i += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, count - i) }, (_, j) => task(i + j));
    results.push(...(await Promise.all(batch)));
  }
  return results;
}

const codeOf = (answer: Awaited<ReturnType<typeof list>>) =>
  answer.status === 200 && !answer.body.errors ? 'ok' : answer.body.errors?.[0]?.extensions?.code;

describe('RATE_LIMIT_REFUSED_KEYS_PER_MINUTE: a client sending a new key every time', () => {
  const gateways: RunningGateway[] = [];
  const limits: RateLimit[] = [];
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    for (const limit of limits) await limit.close();
  });
  async function gatewayWith(options: Parameters<typeof createRateLimit>[0], trustedProxies: string[] = []) {
    const limit = createRateLimit({ ...options, clientAddress: createClientAddresses(trustedProxies).of });
    const gateway = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: limit } });
    limits.push(limit);
    gateways.push(gateway);
    return { limit, gateway };
  }

  it('lets an address have 3 keys refused per minute, then refuses new keys before any upstream call; keys it used go on', async () => {
    const { limit, gateway } = await gatewayWith({ perMinute: 100, refusedKeysPerMinute: 3 });
    // Alice's key is accepted: it costs the address nothing.
    expect((await list(gateway.url, `Bearer ${ALICE}`)).status).toBe(200);
    upstream.requests.length = 0;
    const codes: unknown[] = [];
    for (let i = 0; i < 6; i++) codes.push(codeOf(await list(gateway.url, `Bearer junk-rotating-key-${i}`)));
    expect(codes).toEqual([
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
      'REFUSED_KEYS_LIMITED',
      'REFUSED_KEYS_LIMITED',
      'REFUSED_KEYS_LIMITED',
    ]);
    expect(upstream.requests).toHaveLength(3);
    expect(limit.stats.refusedKeysLimited).toBe(3);
    const refusal = await list(gateway.url, 'Bearer junk-rotating-key-7');
    expect(refusal.status).toBe(429);
    expect(Number(refusal.retryAfter)).toBeGreaterThan(0);
    expect(refusal.body.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/^Too many API keys from this address were refused this minute/),
      extensions: { code: 'REFUSED_KEYS_LIMITED', retryAfter: Number(refusal.retryAfter) },
    });
    // A key the address already used is not held back; nor is a new valid one refused for
    // anything but the refusals: Bob's key is new, so it is refused too until the minute ends.
    for (let i = 0; i < 3; i++) expect((await list(gateway.url, `Bearer ${ALICE}`)).status).toBe(200);
  });

  it('serves 200 valid keys, each new, from one address within a minute (RATE_LIMIT_PER_MINUTE=600)', async () => {
    const keys = Array.from({ length: 200 }, (_, i) => `valid-crowd-key-${i}`);
    for (const key of keys) upstream.tokens.add(key);
    const { limit, gateway } = await gatewayWith({ perMinute: 600 });
    const codes = await inBatches(200, 10, (i) => list(gateway.url, `Bearer ${keys[i]}`).then(codeOf));
    expect(codes.filter((code) => code !== 'ok')).toEqual([]);
    expect(limit.stats.limited).toBe(0);
  });

  it('charges a new valid key one point however many requests it sends at once, and gives it back (#64 row 6b)', async () => {
    const keys = Array.from({ length: 6 }, (_, i) => `valid-burst-key-${i}`);
    for (const key of keys) upstream.tokens.add(key);
    const { limit, gateway } = await gatewayWith({ perMinute: 600, refusedKeysPerMinute: 20 });
    // Six new keys, ten requests each at once (then six more, a batch of ten each): the address's
    // budget of 20 is never spent, since each key holds at most one point while checked and gets
    // it back when the upstream accepts it.
    const codes = await Promise.all(
      keys.flatMap((key) =>
        Array.from({ length: 10 }, () => list(gateway.url, `Bearer ${key}`).then(codeOf)),
      ),
    );
    expect(codes.filter((code) => code !== 'ok')).toEqual([]);
    const fresh = Array.from({ length: 6 }, (_, i) => `valid-batch-key-${i}`);
    for (const key of fresh) upstream.tokens.add(key);
    const batches = await Promise.all(
      fresh.map(async (key) => {
        const response = await fetch(gateway.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify(
            Array.from({ length: 10 }, (_, i) => ({ query: `{ pets(limit: ${i + 1}) { id } }` })),
          ),
        });
        const entries = (await response.json()) as Array<{
          errors?: Array<{ extensions?: { code?: string } }>;
        }>;
        return entries.map((entry) => entry.errors?.[0]?.extensions?.code ?? 'ok');
      }),
    );
    expect(batches.flat().filter((code) => code !== 'ok')).toEqual([]);
    expect(limit.stats.refusedKeysLimited).toBe(0);
    // And the budget is whole: 20 junk keys are still refused by the upstream, the 21st here.
    const junk: unknown[] = [];
    for (let i = 0; i < 21; i++) junk.push(codeOf(await list(gateway.url, `Bearer junk-after-burst-${i}`)));
    expect(junk).toEqual([...Array(20).fill('UNAUTHENTICATED'), 'REFUSED_KEYS_LIMITED']);
  });

  it('lets 300 junk keys from one address cost the upstream no more calls than the budget (60)', async () => {
    const { gateway } = await gatewayWith({ perMinute: 600 });
    const codes = await inBatches(300, 20, (i) => list(gateway.url, `Bearer junk-flood-${i}`).then(codeOf));
    const unauthenticated = codes.filter((code) => code === 'UNAUTHENTICATED').length;
    expect(upstream.requests.length).toBeLessThanOrEqual(60);
    expect(unauthenticated).toBe(upstream.requests.length);
    expect(codes.filter((code) => code === 'REFUSED_KEYS_LIMITED')).toHaveLength(300 - unauthenticated);
  });

  it("behind a trusted proxy, one forwarded client flooding junk keys leaves another forwarded client's new keys served", async () => {
    const keys = Array.from({ length: 20 }, (_, i) => `valid-forwarded-key-${i}`);
    for (const key of keys) upstream.tokens.add(key);
    const { gateway } = await gatewayWith({ perMinute: 600, refusedKeysPerMinute: 5 }, ['127.0.0.1']);
    const flood = await inBatches(30, 10, (i) =>
      list(gateway.url, `Bearer junk-forwarded-${i}`, '203.0.113.7').then(codeOf),
    );
    expect(flood.filter((code) => code === 'REFUSED_KEYS_LIMITED')).toHaveLength(25);
    const other = await inBatches(20, 5, (i) =>
      list(gateway.url, `Bearer ${keys[i]}`, '203.0.113.7, 198.51.100.1').then(codeOf),
    );
    // The second client wrote the flooder's address itself, left of what the proxy appended: not read.
    expect(other).toEqual(Array(20).fill('ok'));
  });

  it("without TRUSTED_PROXIES, a forged X-Forwarded-For changes nothing: every request is its peer's", async () => {
    const { gateway } = await gatewayWith({ perMinute: 600, refusedKeysPerMinute: 5 });
    const codes = await inBatches(10, 5, (i) =>
      list(gateway.url, `Bearer junk-forged-${i}`, `192.0.2.${i}`).then(codeOf),
    );
    expect(codes.filter((code) => code === 'REFUSED_KEYS_LIMITED')).toHaveLength(5);
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
