// @tier integration

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.ts';
import {
  createMemoryDocumentStore,
  createRedisDocumentStore,
  type DocumentStore,
} from '../../src/stores/registered-documents.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { haveRedisServer, type RunningRedis, startRedis } from '../support/redis.ts';
import { code, get, persisted, post, sha256, startApqUpstream } from './apq-requests.ts';

// Automatic persisted queries as Apollo's PersistedQueryLink and urql's persistedExchange speak
// them, on the wire: what an unknown hash, a registration, a wrong hash and a refused mode answer.
// With trusted documents: apq-trusted-documents.test.ts; the caching headers: caching-headers.test.ts.

let upstream: FakeUpstream;
let store: DocumentStore;
const gateways = {} as Record<'apq' | 'off', RunningGateway>;

beforeAll(async () => {
  upstream = await startApqUpstream();
  store = createMemoryDocumentStore({ maxDocuments: 100 });
  gateways.apq = await startGateway({
    upstreamUrl: upstream.url,
    gateway: { automaticPersistedQueries: store },
  });
  gateways.off = await startGateway({ upstreamUrl: upstream.url });
});

afterAll(async () => {
  for (const gateway of Object.values(gateways)) await gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

describe('APQ (default configuration)', () => {
  const query = 'query Apq1 { pets(limit: 2) { id name } }';

  it('an unknown hash: PersistedQueryNotFound, 200 for application/json, no upstream call', async () => {
    const answer = await post(gateways.apq, { extensions: persisted(sha256(query)) });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toEqual([
      { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
    ]);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(upstream.requests).toEqual([]);
  });

  it('an unknown hash: 404 for application/graphql-response+json, same body', async () => {
    const answer = await post(
      gateways.apq,
      { extensions: persisted(sha256(query)) },
      'application/graphql-response+json',
    );
    expect(answer.status).toBe(404);
    expect(answer.body.errors?.[0]?.message).toBe('PersistedQueryNotFound');
  });

  it('hash + document runs and registers; then the hash alone runs it', async () => {
    const first = await post(gateways.apq, { query, extensions: persisted(sha256(query)) });
    expect(first.body.errors).toBeUndefined();
    expect(await store.get(sha256(query))).toBe(query);
    const second = await post(gateways.apq, { extensions: persisted(sha256(query)) });
    expect(second.body).toEqual(first.body);
  });

  it('a hash that is not the SHA-256 of the text: PERSISTED_QUERY_HASH_MISMATCH, nothing runs or registers', async () => {
    const text = 'query Apq2 { pets(limit: 1) { id } }';
    const wrong = sha256(`${text} `);
    const answer = await post(gateways.apq, { query: text, extensions: persisted(wrong) });
    expect(answer.status).toBe(400);
    expect(code(answer)).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    expect(upstream.requests).toEqual([]);
    expect(await store.get(wrong)).toBeUndefined();
    expect(code(await post(gateways.apq, { extensions: persisted(wrong) }))).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
    // Not hex at all, as a hand-made request might send.
    const deadbeef = await post(gateways.apq, { query: text, extensions: persisted('deadbeef') });
    expect(code(deadbeef)).toBe('PERSISTED_QUERY_HASH_MISMATCH');
  });

  it('registers nothing that does not validate or is over a limit', async () => {
    for (const text of [
      'query Bad { pets { nope } }',
      '{ a: pets { id } b: pets { id } c: pets { id } d: pets { id } e: pets { id } f: pets { id } g: pets { id } h: pets { id } i: pets { id } j: pets { id } k: pets { id } }',
      '{ pets(',
    ]) {
      const answer = await post(gateways.apq, { query: text, extensions: persisted(sha256(text)) });
      expect(answer.body.errors?.length).toBeGreaterThan(0);
      expect(await store.get(sha256(text))).toBeUndefined();
    }
  });

  it('a registered document has no privilege: priced again with each request’s variables', async () => {
    const text =
      'query Priced($l: Int) { a: pets(limit: $l) { id name categoryId status } b: pets(limit: $l) { id name categoryId status } c: pets(limit: $l) { id name categoryId } }';
    const registered = await post(gateways.apq, {
      query: text,
      variables: { l: 1 },
      extensions: persisted(sha256(text)),
    });
    expect(registered.body.errors).toBeUndefined();
    const expensive = await post(gateways.apq, {
      variables: { l: 100 },
      extensions: persisted(sha256(text)),
    });
    expect(code(expensive)).toBe('COST_LIMIT_EXCEEDED');
  });

  it('a malformed persistedQuery is BAD_REQUEST', async () => {
    for (const extensions of [
      { persistedQuery: { version: 2, sha256Hash: sha256(query) } },
      { persistedQuery: { version: 1 } },
      { persistedQuery: 'abc' },
    ]) {
      const answer = await post(gateways.apq, { extensions });
      expect(answer.status).toBe(400);
      expect(code(answer)).toBe('BAD_REQUEST');
    }
  });

  describe('over GET', () => {
    const text = 'query ApqGet { pets(limit: 3) { id } }';

    it('unknown, then registered with the text, then the hash alone', async () => {
      const extensions = persisted(sha256(text));
      expect(code(await get(gateways.apq, { extensions }))).toBe('PERSISTED_QUERY_NOT_FOUND');
      const registered = await get(gateways.apq, { query: text, extensions });
      expect(registered.body.errors).toBeUndefined();
      const hashed = await get(gateways.apq, { extensions });
      expect(hashed.body).toEqual(registered.body);
      // Cacheable by the client's own cache only, never by a shared one.
      expect(hashed.headers.get('cache-control')).toBe('private, no-cache');
      expect(hashed.headers.get('vary')).toBe('Accept, Accept-Encoding, Authorization, Origin');
    });

    it('a mutation is 405 over GET, with or without its text, and never registered or sent', async () => {
      const mutation = 'mutation ApqAdd { createPet(input: { name: "Get", categoryId: "1" }) { id } }';
      const extensions = persisted(sha256(mutation));
      const withText = await get(gateways.apq, { query: mutation, extensions });
      expect(withText.status).toBe(405);
      expect(await store.get(sha256(mutation))).toBeUndefined();
      // Registered over POST, then sent by hash over GET.
      expect((await post(gateways.apq, { query: mutation, extensions })).body.errors).toBeUndefined();
      upstream.requests.length = 0;
      expect((await get(gateways.apq, { extensions })).status).toBe(405);
      expect(upstream.requests).toEqual([]);
    });
  });
});

describe('APQ metrics', () => {
  it('/metrics counts lookups by result and registrations, read from the store at scrape time', async () => {
    const metrics = createMetrics();
    const counted = createMemoryDocumentStore();
    metrics.watchDocumentStore(counted.stats);
    const gateway = await startGateway({
      upstreamUrl: upstream.url,
      gateway: { automaticPersistedQueries: counted, metrics },
    });
    try {
      const text = 'query Counted { pets(limit: 1) { id } }';
      await post(gateway, { extensions: persisted(sha256(text)) });
      await post(gateway, { query: text, extensions: persisted(sha256(text)) });
      await post(gateway, { extensions: persisted(sha256(text)) });
      const exposition = await (await fetch(`${gateway.origin}/metrics`)).text();
      expect(exposition).toContain('pet_gateway_apq_lookups_total{result="hit"} 1');
      expect(exposition).toContain('pet_gateway_apq_lookups_total{result="miss"} 1');
      expect(exposition).toContain('pet_gateway_apq_registered_total 1');
      expect(exposition).toContain('pet_gateway_apq_store_errors_total 0');
    } finally {
      await gateway.close();
    }
  });
});

describe('APQ off', () => {
  it('a hash is PERSISTED_QUERY_NOT_SUPPORTED, so clients go back to sending documents', async () => {
    const text = '{ pets(limit: 1) { id } }';
    for (const body of [
      { extensions: persisted(sha256(text)) },
      { query: text, extensions: persisted(sha256(text)) },
    ]) {
      const answer = await post(gateways.off, body);
      expect(answer.status).toBe(200);
      expect(answer.body.errors).toEqual([
        { message: 'PersistedQueryNotSupported', extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED' } },
      ]);
    }
    expect((await post(gateways.off, { query: text })).body.errors).toBeUndefined();
  });
});

const redisAvailable = haveRedisServer('automatic-persisted-queries.test');

describe.skipIf(!redisAvailable)('APQ_STORE=redis: two instances behind one endpoint', () => {
  let redis: RunningRedis;
  let stores: DocumentStore[];
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    redis = await startRedis();
    stores = [createRedisDocumentStore(redis.url), createRedisDocumentStore(redis.url)];
    // The connection starts in the background: wait until a lookup no longer fails.
    for (const store of stores) {
      for (let i = 0; i < 100 && (await lookupFails(store)); i++) await new Promise((r) => setTimeout(r, 20));
    }
    a = await startGateway({ upstreamUrl: upstream.url, gateway: { automaticPersistedQueries: stores[0] } });
    b = await startGateway({ upstreamUrl: upstream.url, gateway: { automaticPersistedQueries: stores[1] } });
  });

  async function lookupFails(store: DocumentStore): Promise<boolean> {
    const before = store.stats.errors;
    await store.get('0'.repeat(64));
    return store.stats.errors > before;
  }

  afterAll(async () => {
    await a?.close();
    await b?.close();
    for (const store of stores ?? []) await store.close();
    await redis?.stop();
  });

  it('a document registered through one instance runs by hash through the other', async () => {
    const text = 'query Shared { pets(limit: 2) { id name } }';
    const viaA = await post(a, { query: text, extensions: persisted(sha256(text)) });
    expect(viaA.body.errors).toBeUndefined();
    const viaB = await post(b, { extensions: persisted(sha256(text)) });
    expect(viaB.body).toEqual(viaA.body);
  });

  it('with Redis gone, a hash is a miss and the text still runs: the client loses a round trip, never a request', async () => {
    await redis.kill();
    const text = 'query AfterRedis { pets(limit: 1) { id } }';
    const miss = await post(a, { extensions: persisted(sha256(text)) });
    expect(code(miss)).toBe('PERSISTED_QUERY_NOT_FOUND');
    const withText = await post(a, { query: text, extensions: persisted(sha256(text)) });
    expect(withText.status).toBe(200);
    expect(withText.body.errors).toBeUndefined();
    expect(stores[0]?.stats.errors).toBeGreaterThan(0);
  });
});
