// @tier integration

import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { createRateLimit, type RateLimit } from '../../src/policy/rate-limit.ts';
import { loadPersistedDocuments } from '../../src/yoga/request/persisted-documents.ts';
import { type FakeUpstream, seedPets, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { ListPets } from '../support/operations.ts';

// Batched operations (a JSON array of GraphQL requests in one POST), as Apollo Client's
// BatchHttpLink and Apollo Kotlin's and iOS's HTTP batching send them: every rule of a single
// request holds for each entry, and each entry's answer stays its own.

const TOKEN = 'batch-token';
const AUTH = `Bearer ${TOKEN}`;
const MANIFEST = new URL('../generated/persisted-documents.json', import.meta.url).pathname;

let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  seedPets(upstream, TOKEN);
});
afterAll(async () => {
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
  upstream.clearFaults();
});

type Entry = {
  query?: string;
  documentId?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
};
interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function batch(url: string, entries: unknown, authorization = AUTH): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization },
    body: JSON.stringify(entries),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text) };
}

const results = (answer: Answer) =>
  answer.body as Array<{
    data?: Record<string, unknown> | null;
    errors?: Array<{ message: string; extensions?: { code?: string } }>;
  }>;
/** The `pets` (or `pet`) list of one entry's data; empty when it has none. */
const field = <T>(answer: Answer, index: number, name: string): T[] => {
  const value = results(answer)[index]?.data?.[name];
  return (Array.isArray(value) ? value : value == null ? [] : [value]) as T[];
};
const codes = (answer: Answer) =>
  results(answer).map((result) => result.errors?.[0]?.extensions?.code ?? 'ok');

describe('batched operations, defaults', () => {
  let gateway: RunningGateway;
  const metrics = createMetrics();
  const lines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      gateway: { logger: pino({ level: 'info' }, sink), metrics },
    });
  });
  afterAll(async () => {
    await gateway.close();
  });
  beforeEach(() => {
    lines.length = 0;
  });

  it('answers a batch of three with an array of three results, in order', async () => {
    const answer = await batch(gateway.url, [
      { query: '{ pets(limit: 1) { id } }' },
      { query: 'query Two { pets(limit: 2) { name } }', operationName: 'Two' },
      { query: 'query Three($limit: Int) { pets(limit: $limit) { status } }', variables: { limit: 3 } },
    ]);
    expect(answer.status).toBe(200);
    expect(field(answer, 0, 'pets')).toHaveLength(1);
    expect(field(answer, 1, 'pets')).toHaveLength(2);
    expect(field<object>(answer, 2, 'pets').map((pet) => Object.keys(pet))).toEqual([
      ['status'],
      ['status'],
      ['status'],
    ]);
    expect(results(answer)).toHaveLength(3);
  });

  it('answers an entry with @defer whole, whatever the client accepts: a batch is one JSON array', async () => {
    for (const accept of ['multipart/mixed', 'text/event-stream', 'application/json']) {
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: AUTH },
        body: JSON.stringify([
          { query: '{ pets(limit: 1) { id ... @defer { name } } }' },
          { query: '{ pets(limit: 1) { id } }' },
        ]),
      });
      expect(response.status).toBe(200);
      // The array is the one payload, however it is framed (a part, an SSE event, the body).
      const line = (await response.text()).split('\n').find((text) => /^(data: )?\[/.test(text)) ?? '[]';
      const [deferred, plain] = JSON.parse(line.replace(/^data: /, '')) as Array<{ data?: unknown }>;
      expect(deferred?.data).toEqual({ pets: [{ id: expect.any(String), name: expect.any(String) }] });
      expect(plain?.data).toEqual({ pets: [{ id: expect.any(String) }] });
    }
  });

  it('keeps one bad entry’s error in its own result and serves the others', async () => {
    const answer = await batch(gateway.url, [
      { query: '{ pets(limit: 1) { id } }' },
      { query: '{ pets(limit: 1) { nope } }' },
      { query: '{ pets(limit: 500) { id } }' },
      { query: '{ pets(limit: 2) { id } }' },
      // Three lists of 100 with four fields: 1,203 over MAX_COST's 1,000, refused on its own.
      {
        query:
          '{ a: pets(limit: 100) { id name categoryId status } b: pets(limit: 100) { id name categoryId status } c: pets(limit: 100) { id name categoryId status } }',
      },
    ]);
    expect(answer.status).toBe(200);
    expect(codes(answer)).toEqual([
      'ok',
      'GRAPHQL_VALIDATION_FAILED',
      'BAD_USER_INPUT',
      'ok',
      'COST_LIMIT_EXCEEDED',
    ]);
    expect(field(answer, 3, 'pets')).toHaveLength(2);
  });

  it('refuses an entry over MAX_COST with data: null, @defer or not (#64 row 7)', async () => {
    const fields = '{ id name categoryId status }';
    const lists = `a: pets(limit: 100) ${fields} b: pets(limit: 100) ${fields} c: pets(limit: 100) ${fields}`;
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: AUTH },
      body: JSON.stringify([
        { query: `{ ... @defer { ${lists} } }` },
        { query: `{ ${lists} }` },
        { query: `{ x: pets(limit: 1) { id } ... @defer { ${lists} } }` },
      ]),
    });
    const entries = (await response.json()) as Array<{
      data?: unknown;
      errors?: Array<{ extensions?: { code?: string } }>;
    }>;
    expect(entries.map((entry) => entry.errors?.[0]?.extensions?.code)).toEqual([
      'COST_LIMIT_EXCEEDED',
      'COST_LIMIT_EXCEEDED',
      'COST_LIMIT_EXCEEDED',
    ]);
    expect(entries.map((entry) => entry.data)).toEqual([null, null, null]);
    // And alone, to a client that takes only JSON (the parts merged as for a batch entry).
    const alone = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: AUTH },
      body: JSON.stringify({ query: `{ ... @defer { ${lists} } }` }),
    });
    expect(await alone.json()).toMatchObject({
      data: null,
      errors: [{ extensions: { code: 'COST_LIMIT_EXCEEDED' } }],
    });
  });

  it('answers an entry without a document with its own coded error, beside a served one', async () => {
    const answer = await batch(gateway.url, [
      {},
      { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } },
      { query: '{ pets(limit: 1) { id } }' },
    ]);
    expect(answer.status).toBe(200);
    const [empty, unknownHash, served] = codes(answer);
    expect(empty).toMatch(/^[A-Z_]+$/);
    expect(empty).not.toBe('ok');
    expect(unknownHash).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
    expect(served).toBe('ok');
  });

  it('answers an entry whose parameters have the wrong type with its own BAD_REQUEST, beside served ones', async () => {
    const answer = await batch(gateway.url, [
      { query: '{ pets(limit: 1) { id } }' },
      { query: 'query A { pets(limit: 1) { id } }', operationName: 5 },
      { query: 5 },
      { query: '{ pets(limit: 1) { id } }', variables: 'x' },
      { query: 'query B { pets(limit: 2) { id } }', operationName: 'B' },
    ]);
    expect(answer.status).toBe(200);
    expect(codes(answer)).toEqual(['ok', 'BAD_REQUEST', 'BAD_REQUEST', 'BAD_REQUEST', 'ok']);
    expect(results(answer)[1]?.errors?.[0]?.message).toBe('operationName must be a string or null.');
    expect(field(answer, 4, 'pets')).toHaveLength(2);
  });

  it('refuses 11 entries with a 400 that names the bound, before anything runs', async () => {
    const entries = Array.from({ length: 11 }, () => ({ query: '{ pets(limit: 1) { id } }' }));
    const answer = await batch(gateway.url, entries);
    expect(answer.status).toBe(400);
    const { errors } = answer.body as { errors: Array<{ message: string; extensions: { code: string } }> };
    expect(errors[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(errors[0]?.message).toContain('MAX_BATCH_OPERATIONS');
    expect(errors[0]?.message).toContain(String(DEFAULT_LIMITS.maxBatchOperations));
    expect(upstream.requests).toHaveLength(0);
    const ten = await batch(gateway.url, entries.slice(0, 10));
    expect(ten.status).toBe(200);
    expect(codes(ten).every((code) => code === 'ok')).toBe(true);
  });

  it('refuses an empty array with a 400 that names the bound', async () => {
    const answer = await batch(gateway.url, []);
    expect(answer.status).toBe(400);
    const { errors } = answer.body as { errors: Array<{ message: string; extensions: { code: string } }> };
    expect(errors[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(errors[0]?.message).toContain('MAX_BATCH_OPERATIONS');
  });

  it('shares the caller’s upstream calls: five entries asking for one pet make one call', async () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({
      query: `query P${i} { pet(id: "2") { id name } }`,
    }));
    const answer = await batch(gateway.url, entries);
    expect(codes(answer)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect([0, 1, 2, 3, 4].flatMap((index) => field<{ name: string }>(answer, index, 'pet'))).toEqual(
      Array(5).fill({ id: '2', name: 'Tom' }),
    );
    expect(upstream.requests.filter((request) => request.path.startsWith('/v1/pets/2'))).toHaveLength(1);
  });

  it('runs a batch that holds a mutation in order, as a document’s mutation fields run', async () => {
    const create = (name: string) => ({
      query: 'mutation C($name: String!) { createPet(input: { name: $name, categoryId: "1" }) { name } }',
      variables: { name },
    });
    const answer = await batch(gateway.url, [
      create('First'),
      { query: '{ pets(limit: 100) { name } }' },
      create('Second'),
      { query: '{ pets(limit: 100) { name } }' },
    ]);
    expect(codes(answer)).toEqual(['ok', 'ok', 'ok', 'ok']);
    const names = (index: number) => field<{ name: string }>(answer, index, 'pets').map((pet) => pet.name);
    expect(names(1)).toContain('First');
    expect(names(1)).not.toContain('Second');
    expect(names(3)).toContain('Second');
    const methods = upstream.requests.map((request) => `${request.method} ${request.path.split('?')[0]}`);
    expect(methods).toEqual(['POST /v1/pets', 'GET /v1/pets', 'POST /v1/pets', 'GET /v1/pets']);
    // Entries run in order do not share loaders: each line counts its own call.
    const operations = lines.filter((line) => line.msg === 'operation');
    expect(operations.map((line) => line.upstreamCalls)).toEqual([1, 1, 1, 1]);
  });

  it('counts on each entry’s line the calls it asked for, and which of them another entry shared (#64 row 8)', async () => {
    await batch(gateway.url, [
      { query: 'query R0 { pets(limit: 4) { id } }' },
      { query: 'query R1 { pets(limit: 4) { id } b: pets(limit: 6) { id } }' },
      { query: 'query R2 { pets(limit: 5) { id } }' },
    ]);
    const operations = lines.filter((line) => line.msg === 'operation');
    const calls = new Map(
      operations.map((line) => [line.operationName, [line.upstreamCalls, line.upstreamCallsShared]]),
    );
    expect(calls).toEqual(
      new Map([
        ['R0', [1, 1]],
        ['R1', [2, 1]],
        ['R2', [1, undefined]],
      ]),
    );
    expect(upstream.requests).toHaveLength(3);
  });

  it('writes one log line per operation, each naming its place in the batch', async () => {
    await batch(gateway.url, [
      { query: 'query A { pets(limit: 1) { id } }' },
      { query: 'query B { pets(limit: 1) { nope } }', operationName: 'B' },
    ]);
    const operations = lines.filter((line) => line.msg === 'operation');
    expect(operations).toHaveLength(2);
    const byName = new Map(operations.map((line) => [line.operationName, line]));
    expect(byName.get('A')).toMatchObject({ outcome: 'ok', batch: { index: 0, size: 2 } });
    const exposition = await metrics.registry.metrics();
    expect(exposition).toMatch(/^pet_gateway_batch_operations_bucket\{le="2"\} [1-9]/m);
    expect(exposition).toMatch(
      /^pet_gateway_operations_total\{operationName="A",operationType="query"\} [1-9]/m,
    );
    expect(byName.get('B')).toMatchObject({
      outcome: 'error',
      codes: ['GRAPHQL_VALIDATION_FAILED'],
      batch: { index: 1, size: 2 },
    });
  });

  it('marks a batch with an error as not to be stored', async () => {
    const good = await batch(gateway.url, [
      { query: '{ pets(limit: 1) { id } }' },
      { query: '{ pets(limit: 2) { id } }' },
    ]);
    expect(good.headers.get('cache-control')).toBe('private, no-cache');
    const bad = await batch(gateway.url, [{ query: '{ pets(limit: 1) { id } }' }, { query: '{ nope }' }]);
    expect(bad.headers.get('cache-control')).toBe('no-store');
  });

  it('takes no batch over GET: the query parameter is one document, and an array is not one', async () => {
    const query = encodeURIComponent(JSON.stringify([{ query: '{ pets { id } }' }]));
    const response = await fetch(`${gateway.url}?query=${query}`, {
      headers: { authorization: AUTH, accept: 'application/graphql-response+json' },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(body.errors[0]?.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('batched operations and the per-key rate limit', () => {
  let gateway: RunningGateway;
  let limit: RateLimit;
  beforeAll(async () => {
    limit = createRateLimit({ perMinute: 3 });
    gateway = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: limit } });
  });
  afterAll(async () => {
    await gateway.close();
    await limit.close();
  });

  it('counts each operation: four operations in two batches with RATE_LIMIT_PER_MINUTE=3 serve three', async () => {
    const entry = { query: '{ pets(limit: 1) { id } }' };
    const first = await batch(gateway.url, [entry, entry]);
    const second = await batch(gateway.url, [entry, entry]);
    expect([...codes(first), ...codes(second)]).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED']);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
  });
});

describe('batched operations with trusted documents required', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      gateway: { persistedOperations: { mode: 'require', documents: loadPersistedDocuments(MANIFEST) } },
    });
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('runs the entry sent by id and refuses the one sent as text, each on its own', async () => {
    // The id codegen gave the document (client preset, persistedDocuments).
    const id = (ListPets as unknown as { __meta__: { hash: string } }).__meta__.hash;
    expect(loadPersistedDocuments(MANIFEST).has(id)).toBe(true);
    const answer = await batch(gateway.url, [
      { documentId: id, variables: { limit: 1 } },
      { query: '{ pets(limit: 1) { id } }' },
    ] satisfies Entry[]);
    expect(answer.status).toBe(200);
    expect(codes(answer)).toEqual(['ok', 'PERSISTED_OPERATION_REQUIRED']);
  });
});

describe('MAX_BATCH_OPERATIONS=1', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      limits: { ...DEFAULT_LIMITS, maxBatchOperations: 1 },
    });
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('turns batching off: an array is a 400 that says how to turn it on', async () => {
    const answer = await batch(gateway.url, [{ query: '{ pets(limit: 1) { id } }' }]);
    expect(answer.status).toBe(400);
    const { errors } = answer.body as { errors: Array<{ message: string }> };
    expect(errors[0]?.message).toContain('MAX_BATCH_OPERATIONS');
  });
});
