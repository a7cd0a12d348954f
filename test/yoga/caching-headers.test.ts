// @tier integration

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryDocumentStore } from '../../src/stores/registered-documents.ts';
import { createMemoryCache } from '../../src/stores/response-cache.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { AUTH, get, post, startApqUpstream } from './apq-requests.ts';

// Cache-Control and Vary on what the gateway answers: a query is private, with a max-age only from
// the response cache's TTL; a mutation, an error and a request refused before GraphQL are no-store.

let upstream: FakeUpstream;
const gateways = {} as Record<'apq' | 'cached', RunningGateway>;

beforeAll(async () => {
  upstream = await startApqUpstream();
  gateways.apq = await startGateway({
    upstreamUrl: upstream.url,
    gateway: { automaticPersistedQueries: createMemoryDocumentStore({ maxDocuments: 100 }) },
  });
  gateways.cached = await startGateway({
    upstreamUrl: upstream.url,
    cache: { store: createMemoryCache(), ttlMs: 2500 },
    gateway: { automaticPersistedQueries: createMemoryDocumentStore() },
  });
});

afterAll(async () => {
  for (const gateway of Object.values(gateways)) await gateway.close();
  await upstream.close();
});

describe('caching headers', () => {
  const vary = 'Accept, Accept-Encoding, Authorization, Origin';

  it('a query: private, and max-age only from the response cache’s TTL', async () => {
    const text = '{ pets(limit: 1) { id } }';
    const plain = await post(gateways.apq, { query: text });
    expect(plain.headers.get('cache-control')).toBe('private, no-cache');
    expect(plain.headers.get('vary')).toBe(vary);
    const cached = await post(gateways.cached, { query: text });
    expect(cached.headers.get('cache-control')).toBe('private, max-age=2');
    const overGet = await get(gateways.cached, { query: text });
    expect(overGet.headers.get('cache-control')).toBe('private, max-age=2');
  });

  it('a mutation, a field error and a request error: no-store', async () => {
    const mutation = await post(gateways.cached, {
      query: 'mutation { createPet(input: { name: "Hdr", categoryId: "1" }) { id } }',
    });
    expect(mutation.body.errors).toBeUndefined();
    const fieldError = await post(gateways.cached, { query: '{ pet(id: "404") { id } }' });
    expect(fieldError.body.errors?.length).toBe(1);
    const requestError = await post(gateways.cached, { query: '{ nope }' });
    for (const answer of [mutation, fieldError, requestError]) {
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.headers.get('vary')).toBe(vary);
    }
  });

  it('a request the listener refuses before GraphQL (two Authorization headers): no-store', async () => {
    const answer = await new Promise<{ status: number; cacheControl: string | undefined }>(
      (resolve, reject) => {
        const req = request(gateways.apq.url, {
          method: 'POST',
          // A raw header list (so both are sent) gets no Host from Node: it is given here.
          headers: [
            ['host', new URL(gateways.apq.url).host],
            ['content-type', 'application/json'],
            ['authorization', AUTH],
            ['authorization', AUTH],
          ].flat(),
        });
        req.on('response', (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, cacheControl: res.headers['cache-control'] });
        });
        req.on('error', reject);
        req.end('{"query":"{ pets { id } }"}');
      },
    );
    expect(answer).toEqual({ status: 400, cacheControl: 'no-store' });
  });
});
