// @tier integration

import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/contract/routes.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { createLoaders } from '../../src/upstream/loaders.ts';
import { BIG_ID, type FakeUpstream, MAX_INT64, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { execute, postJson } from '../support/graphql.ts';
import {
  CreatePet,
  GetPet,
  ListPets,
  ListPetsDefault,
  RepeatedPet,
  RepeatedPets,
} from '../support/operations.ts';

const TOKEN = 'alice-token';
const AUTH = `Bearer ${TOKEN}`;

let upstream: FakeUpstream;
let gateway: RunningGateway;

useGateway({ tokens: [TOKEN], seed: (u) => seedPets(u, TOKEN) }, (started) => {
  ({ upstream, gateway } = started);
});

describe('pets', () => {
  it('lists pets with int64 ids beyond 2^53 exact, as strings', async () => {
    const result = await execute(gateway.url, ListPets, {}, AUTH);
    expect(result.errors).toBeUndefined();
    expect(result.data?.pets).toEqual([
      { id: BIG_ID, name: 'Rex', categoryId: MAX_INT64, status: 'AVAILABLE' },
      { id: '2', name: 'Tom', categoryId: '1', status: 'SOLD' },
      { id: '3', name: 'Nemo', categoryId: '1', status: null },
    ]);
    // The wire text itself carries the exact digits as JSON strings.
    expect(result.text).toContain(`"id":"${BIG_ID}"`);
  });

  it('sends limit 20 when none is given, and the status filter in REST spelling', async () => {
    await execute(gateway.url, ListPetsDefault, {}, AUTH);
    await execute(gateway.url, ListPets, { status: 'SOLD' }, AUTH);
    expect(upstream.requests.map((r) => r.path)).toEqual([
      '/v1/pets?limit=20',
      '/v1/pets?limit=20&status=sold',
    ]);
    const sold = await execute(gateway.url, ListPets, { status: 'SOLD' }, AUTH);
    expect(sold.data?.pets.map((pet) => pet.name)).toEqual(['Tom']);
  });

  it('treats an explicit null limit as the default', async () => {
    const result = await execute(gateway.url, ListPets, { limit: null }, AUTH);
    expect(result.errors).toBeUndefined();
    expect(upstream.requests.map((r) => r.path)).toEqual(['/v1/pets?limit=20']);
  });

  it.each([1, 100])('passes limit %i, the edge of 1..100, through', async (limit) => {
    const result = await execute(gateway.url, ListPets, { limit }, AUTH);
    expect(result.errors).toBeUndefined();
    expect(upstream.requests.map((r) => r.path)).toEqual([`/v1/pets?limit=${limit}`]);
  });

  it.each([0, 101, -1])('refuses limit %i with BAD_USER_INPUT before any upstream call', async (limit) => {
    const result = await execute(gateway.url, ListPets, { limit }, AUTH);
    expect(result.data).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).toMatch(/limit must be from 1 to 100/);
    expect(upstream.requests).toEqual([]);
  });

  it('prices a limit as asked: 2147483647 is refused for its cost before any upstream call', async () => {
    // As a router in front prices it from the @listSize the schema declares.
    const result = await execute(gateway.url, ListPets, { limit: 2147483647 }, AUTH);
    expect(result.data).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(upstream.requests).toEqual([]);
  });

  it('refuses a limit that is not an Int (GraphQL validation), before any upstream call', async () => {
    const result = await postJson(gateway.url, { query: '{ pets(limit: "1") { id } }' }, AUTH);
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const tooBig = await postJson(gateway.url, { query: '{ pets(limit: 2147483648) { id } }' }, AUTH);
    expect(tooBig.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(upstream.requests).toEqual([]);
  });

  it('de-duplicates identical pets(status, limit) in one operation into one GET /pets', async () => {
    const result = await execute(gateway.url, RepeatedPets, {}, AUTH);
    expect(result.errors).toBeUndefined();
    expect(result.data?.a).toEqual([{ id: '2' }]);
    expect(result.data?.b).toEqual([{ name: 'Tom' }]);
    expect(upstream.requests.map((r) => r.path).sort()).toEqual([
      '/v1/pets?limit=5',
      '/v1/pets?limit=5&status=sold',
    ]);
  });
});

describe('pet (deprecated)', () => {
  it('returns one pet by an id beyond 2^53', async () => {
    const result = await execute(gateway.url, GetPet, { id: BIG_ID }, AUTH);
    expect(result.data?.pet).toEqual({ id: BIG_ID, name: 'Rex', categoryId: MAX_INT64, status: 'AVAILABLE' });
    expect(upstream.requests.map((r) => r.path)).toEqual([`/v1/pets/${BIG_ID}`]);
  });

  it('de-duplicates repeated ids in one operation: one GET per distinct id', async () => {
    const result = await execute(gateway.url, RepeatedPet, { one: BIG_ID, two: '2' }, AUTH);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      a: { id: BIG_ID },
      b: { name: 'Rex' },
      c: { id: '2' },
      d: { categoryId: MAX_INT64 },
    });
    expect(upstream.requests.map((r) => r.path).sort()).toEqual(['/v1/pets/2', `/v1/pets/${BIG_ID}`]);
  });

  it('answers null plus the upstream 404 error, code verbatim', async () => {
    const result = await execute(gateway.url, GetPet, { id: '404' }, AUTH);
    expect(result.data).toEqual({ pet: null });
    expect(result.errors).toEqual([
      {
        message: 'No pet with id 404.',
        path: ['pet'],
        locations: [{ line: 2, column: 3 }],
        extensions: { code: 'PET_NOT_FOUND', status: 404 },
      },
    ]);
  });

  it('canonicalises ids, so 007 and 7 are one call', async () => {
    const result = await execute(gateway.url, RepeatedPet, { one: '007', two: '7' }, AUTH);
    // Both spellings reach the upstream's 404 (the fake holds no pet 7): neither is refused.
    expect(result.errors?.map((error) => error.extensions?.code)).toEqual(Array(4).fill('PET_NOT_FOUND'));
    expect(upstream.requests.map((r) => r.path)).toEqual(['/v1/pets/7']);
  });

  it.each([
    'abc',
    '1.5',
    '',
    '9223372036854775808', // int64 max + 1
    '-9223372036854775809',
    '1e3',
    '0x10',
    '1'.repeat(10_000),
  ])('refuses id %j with BAD_USER_INPUT and no upstream call', async (id) => {
    const result = await execute(gateway.url, GetPet, { id }, AUTH);
    expect(result.data).toEqual({ pet: null });
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message.length).toBeLessThan(200);
    expect(upstream.requests).toEqual([]);
  });
});

describe('createPet', () => {
  it('sends categoryId as a JSON integer literal with every digit, and returns the new pet exactly', async () => {
    const result = await execute(
      gateway.url,
      CreatePet,
      { input: { name: 'Max "the dog"', categoryId: MAX_INT64, status: 'PENDING' } },
      AUTH,
    );
    expect(result.errors).toBeUndefined();
    const created = result.data?.createPet;
    expect(created).toMatchObject({ name: 'Max "the dog"', categoryId: MAX_INT64, status: 'PENDING' });
    expect(BigInt(created?.id ?? '0')).toBeGreaterThan(2n ** 53n);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.method).toBe('POST');
    expect(JSON.parse(upstream.requests[0]?.body ?? '')).toMatchObject({
      name: 'Max "the dog"',
      status: 'pending',
    });
    expect(upstream.requests[0]?.body).toContain(`"categoryId":${MAX_INT64}`);
  });

  it('omits status when none is given', async () => {
    await execute(gateway.url, CreatePet, { input: { name: 'Bob', categoryId: '5' } }, AUTH);
    expect(upstream.requests[0]?.body).toBe('{"name":"Bob","categoryId":5}');
  });

  it.each(['x', '1.0', '9223372036854775808', '-'])(
    'refuses categoryId %j with BAD_USER_INPUT and no POST',
    async (categoryId) => {
      const result = await execute(gateway.url, CreatePet, { input: { name: 'Bad', categoryId } }, AUTH);
      expect(result.data).toBeNull();
      expect(result.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        argument: 'input.categoryId',
      });
      expect(upstream.requests).toEqual([]);
    },
  );

  it('refuses a missing required field in GraphQL validation, with no POST', async () => {
    const result = await postJson(
      gateway.url,
      { query: 'mutation { createPet(input: { name: "A" }) { id } }' },
      AUTH,
    );
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(upstream.requests).toEqual([]);
  });

  it('primes the by-id cache from pets and createPet results', async () => {
    const client = createUpstreamClient({ baseUrl: new URL(upstream.url), timeoutMs: 2000, connections: 2 });
    try {
      const loaders = createLoaders(client, AUTH);
      await loaders.petList.load({ limit: 20 });
      const created = await loaders.write({
        route: ROUTES.createPet,
        body: { name: 'Primed', categoryId: '1' },
      });
      expect((await loaders.petById.load(BIG_ID)).name).toBe('Rex');
      expect((await loaders.petById.load(created?.id ?? '')).name).toBe('Primed');
      expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'GET /v1/pets?limit=20',
        'POST /v1/pets',
      ]);
    } finally {
      await client.close();
    }
  });
});

describe('authorization', () => {
  it('forwards the caller’s Authorization header verbatim', async () => {
    await execute(gateway.url, ListPets, {}, AUTH);
    expect(upstream.requests[0]?.authorization).toBe(AUTH);
  });

  it('passes the upstream’s 401 code through for a well-formed key it refuses', async () => {
    const result = await execute(gateway.url, ListPets, {}, 'Bearer unknown-key');
    expect(upstream.requests[0]?.authorization).toBe('Bearer unknown-key');
    expect(result.errors?.[0]).toMatchObject({
      message: 'Missing or invalid API key.',
      extensions: { code: 'UNAUTHENTICATED', status: 401 },
    });
    expect(result.text).not.toContain('unknown-key');
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['Bearer with no key', 'Bearer '],
    ['another scheme', 'Basic YWxpY2U6cHc='],
    ['a space in the key', 'bearer a b'],
    ['an 8 KB key', `Bearer ${'k'.repeat(8192)}`],
  ])('refuses %s with UNAUTHENTICATED and no upstream call', async (_name, authorization) => {
    const result = await execute(gateway.url, ListPets, {}, authorization);
    expect(result.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
    expect(upstream.requests).toEqual([]);
  });

  it('still answers introspection without a key', async () => {
    const result = await postJson(gateway.url, { query: '{ __typename __type(name: "Pet") { name } }' });
    expect(result.data).toEqual({ __typename: 'Query', __type: { name: 'Pet' } });
  });

  it('keeps 40 concurrent callers with different tokens apart', async () => {
    const callers = Array.from({ length: 40 }, (_, i) => `caller-${i}`);
    for (const token of callers) upstream.tokens.add(token);
    await Promise.all(
      callers.map((token) =>
        execute(
          gateway.url,
          CreatePet,
          { input: { name: `pet-of-${token}`, categoryId: '1' } },
          `Bearer ${token}`,
        ),
      ),
    );
    const lists = await Promise.all(
      callers.map((token) => execute(gateway.url, ListPets, {}, `Bearer ${token}`)),
    );
    lists.forEach((list, i) => {
      expect(list.data?.pets.map((pet) => pet.name)).toEqual([`pet-of-${callers[i]}`]);
    });
    for (const request of upstream.requests) {
      const owner = /^Bearer (caller-\d+)$/.exec(request.authorization ?? '')?.[1];
      if (request.method === 'POST') expect(request.body).toContain(`pet-of-${owner}"`);
    }
    expect(upstream.requests).toHaveLength(80);
  });
});
