// @tier integration

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryCache } from '../../src/stores/response-cache.ts';
import { createCallerKey } from '../../src/upstream/caller-key.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { ListPets } from '../support/operations.ts';

// The Authorization scheme is case-insensitive (RFC 9110 §11.1), as the upstream reads it. The
// gateway accepts any spelling and forwards (and hashes, for the response cache) one canonical
// form, so a caller is the same caller however it spells "Bearer".

const TOKEN = 'auth-token-4c1d';

let upstream: FakeUpstream;
let gateway: RunningGateway;
const store = createMemoryCache();

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '1', status: 'available' });
  gateway = await startGateway({ upstreamUrl: upstream.url, cache: { store, ttlMs: 60_000 } });
});

afterAll(async () => {
  await gateway.close();
  await store.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

describe('Authorization scheme spelling', () => {
  let distinctLimits = 0;
  it.each([`bearer ${TOKEN}`, `BEARER ${TOKEN}`, `bEaReR ${TOKEN}`, `Bearer   ${TOKEN}`])(
    'accepts %j and sends the upstream "Bearer <key>"',
    async (authorization) => {
      // A limit no other case uses, so the response cache cannot answer it.
      const limit = 10 + distinctLimits++;
      const result = await execute(gateway.url, ListPets, { limit }, authorization);
      expect(result.errors, result.text).toBeUndefined();
      expect(result.data?.pets.map((pet) => pet.name)).toEqual(['Rex']);
      expect(upstream.requests.map((r) => r.authorization)).toEqual([`Bearer ${TOKEN}`]);
    },
  );

  it('"bearer k" and "Bearer k" are one caller for the response cache', async () => {
    await execute(gateway.url, ListPets, { limit: 3 }, `Bearer ${TOKEN}`);
    const again = await execute(gateway.url, ListPets, { limit: 3 }, `bearer ${TOKEN}`);
    expect(again.data?.pets.map((pet) => pet.name)).toEqual(['Rex']);
    expect(upstream.requests).toHaveLength(1);
    // Only the canonical spelling is ever hashed into a key.
    expect(store.stats.hits).toBeGreaterThan(0);
    const callerKey = createCallerKey();
    expect(callerKey(`Bearer ${TOKEN}`)).not.toBe(callerKey(`bearer ${TOKEN}`));
  });

  it('the token stays case-sensitive', async () => {
    const result = await execute(gateway.url, ListPets, { limit: 4 }, `Bearer ${TOKEN.toUpperCase()}`);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    expect(upstream.requests.map((r) => r.authorization)).toEqual([`Bearer ${TOKEN.toUpperCase()}`]);
  });

  it.each([
    ['no header', undefined, 'An Authorization: Bearer <API key> header is required.'],
    ['another scheme', 'Basic YWxpY2U6cHc=', 'The Authorization header must be "Bearer <API key>".'],
    ['a tab after the scheme', `Bearer\t${TOKEN}`, 'The Authorization header must be "Bearer <API key>".'],
  ])('refuses %s before any upstream call', async (_name, authorization, message) => {
    const result = await execute(gateway.url, ListPets, { limit: 5 }, authorization);
    expect(result.errors?.[0]?.message).toBe(message);
    expect(upstream.requests).toEqual([]);
  });
});
