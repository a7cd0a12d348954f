// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryCache } from '../../src/stores/response-cache.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { APQ_LIST, persistedQuery, type Side, send, sha256, side, startLanesUpstream } from './sides.ts';

// Cache-Control and Vary, differentially: a Yoga side and a fast-lane side, each with a response
// cache of its own, must send the same caching headers for what the fast lane answers itself.

describe('caching headers are the same in both lanes', () => {
  let upstream: FakeUpstream;
  let cachedYoga: Side;
  let cachedFast: Side;
  const ttlMs = 3000;

  beforeAll(async () => {
    upstream = await startLanesUpstream();
    cachedYoga = await side(upstream, false, undefined, { store: createMemoryCache(), ttlMs });
    cachedFast = await side(upstream, true, undefined, { store: createMemoryCache(), ttlMs });
  });

  afterAll(async () => {
    await cachedYoga.gateway.close();
    await cachedFast.gateway.close();
    await upstream.close();
  });

  it.each([
    ['a query with the response cache on', { query: '{ pets(limit: 2) { id } }' }, 'private, max-age=3'],
    [
      'a query by APQ hash',
      { extensions: persistedQuery(sha256(APQ_LIST)), variables: { limit: 2 } },
      'private, max-age=3',
    ],
    [
      'a mutation',
      { query: 'mutation { createPet(input: { name: "Cc", categoryId: "1" }) { name } }' },
      'no-store',
    ],
  ])('%s: %s', async (_name, body, cacheControl) => {
    const register = { query: APQ_LIST, extensions: persistedQuery(sha256(APQ_LIST)) };
    await send(cachedYoga, register);
    await send(cachedFast, register);
    for (let run = 0; run < 3; run++) await send(cachedFast, body);
    const before = cachedFast.gateway.lanes?.served.fast ?? 0;
    const viaYoga = await send(cachedYoga, body);
    const viaFast = await send(cachedFast, body);
    expect(cachedFast.gateway.lanes?.served.fast).toBe(before + 1);
    expect(viaFast.headers['cache-control']).toBe(cacheControl);
    expect(viaYoga.headers['cache-control']).toBe(cacheControl);
    expect(viaFast.headers.vary).toBe('Accept, Accept-Encoding, Authorization, Origin');
    expect(viaFast.headers).toEqual(viaYoga.headers);
  });
});
