// @tier integration

import { request } from 'undici';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import type { Lanes } from '../../src/policy/prepared-operations.ts';
import { type FakeUpstream, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';

// The one-call path (src/fast-lane/one-call.ts): a prepared query that is one fixed `GET /pets`
// is answered from the upstream client's callback, with no context or loaders. lanes.test.ts holds
// its answers to Yoga's bytes with the other cases of the corpus; here, what is its own: which
// requests take it, and that the client's layers (retries, coalescing, cancellation) still act on
// its call, with the log line Yoga's lane would write.

const TOKEN = 'one-call-token';
const AUTH = `Bearer ${TOKEN}`;
const LIST = '{ pets(limit: 3) { id name } }';

let upstream: FakeUpstream;
let gateway: RunningGateway;
let lanes: Lanes;
const logs: string[] = [];

useGateway(
  {
    tokens: [TOKEN],
    seed: (started) => seedPets(started, TOKEN),
    gateway: {
      timeoutMs: 2000,
      client: { retryBaseMs: 1 },
      gateway: { logger: createLogger('info', { write: (line: string) => void logs.push(line) }) },
    },
  },
  (started) => {
    ({ upstream, gateway } = started);
    lanes = gateway.lanes as Lanes;
  },
);

beforeEach(() => {
  logs.length = 0;
});

async function send(query: string, variables?: Record<string, unknown>, auth = AUTH) {
  const response = await request(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: auth },
    body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
}

/** Sends `query` until the fast lane has it prepared; then the upstream's requests and the log are empty. */
async function prepare(query: string, variables?: Record<string, unknown>) {
  for (let i = 0; i < 3; i++) await send(query, variables);
  upstream.requests.length = 0;
  logs.length = 0;
}

/** Prepares `query`, then sends it once more: what that last one did. */
async function counted(query: string, variables?: Record<string, unknown>) {
  await prepare(query, variables);
  const before = { ...lanes.served };
  const answer = await send(query, variables);
  const after = lanes.served;
  return {
    answer,
    oneCall: after.oneCall - before.oneCall,
    fast: after.fast - before.fast,
    gets: upstream.requests.filter((r) => r.method === 'GET').length,
  };
}

const operationLine = () =>
  logs.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => 'upstreamCalls' in line);

describe('the one-call path', () => {
  it('answers a fixed pets query itself: one GET, the log line counting it', async () => {
    const { answer, oneCall, fast, gets } = await counted(LIST);
    expect(answer.status).toBe(200);
    expect((answer.body.data as { pets: unknown[] }).pets).toHaveLength(3);
    expect({ oneCall, fast, gets }).toEqual({ oneCall: 1, fast: 1, gets: 1 });
    expect(operationLine()).toMatchObject({ upstreamCalls: 1, status: 200, operationType: 'query' });
  });

  it('answers one with variables, and hands a refused limit on before any call', async () => {
    const query = 'query L($l: Int, $s: PetStatus) { pets(limit: $l, status: $s) { id __typename } }';
    const taken = await counted(query, { l: 1, s: 'SOLD' });
    expect(taken.answer.body).toEqual({ data: { pets: [{ id: '2', __typename: 'Pet' }] } });
    expect({ oneCall: taken.oneCall, fast: taken.fast, gets: taken.gets }).toEqual({
      oneCall: 1,
      fast: 1,
      gets: 1,
    });
    expect(upstream.requests[0]?.path).toBe('/v1/pets?limit=1&status=sold');
    upstream.requests.length = 0;
    const before = { ...lanes.served };
    const refused = await send(query, { l: 101 });
    expect(refused.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] });
    expect(lanes.served.oneCall - before.oneCall).toBe(1);
    expect(lanes.served.fast - before.fast).toBe(0);
    expect(upstream.requests).toHaveLength(0);
  });

  it('leaves to the usual path what it does not hold: the deprecated pet(id), two calls', async () => {
    for (const [query, variables] of [
      ['{ pet(id: "2") { id } }', undefined],
      ['{ a: pets(limit: 1) { id } b: pets(limit: 2) { id } }', undefined],
    ] as const) {
      const { answer, oneCall, fast } = await counted(query, variables);
      expect(answer.status, query).toBe(200);
      expect({ oneCall, fast }, query).toEqual({ oneCall: 0, fast: 1 });
    }
  });

  it('retries an idempotent GET the upstream could not answer, as the client always does', async () => {
    await prepare(LIST);
    upstream.fault(/^\/v1\/pets\?/, (_req, res) => res.writeHead(503).end(), 2);
    const before = { ...lanes.served };
    const answer = await send(LIST);
    expect(answer.status).toBe(200);
    expect(lanes.served.oneCall - before.oneCall).toBe(1);
    expect(lanes.served.fast - before.fast).toBe(1);
    expect(upstream.requests.filter((r) => r.method === 'GET')).toHaveLength(3);
  });

  it('hands a failure on to the usual path without calling again: the error and code Yoga gives', async () => {
    await prepare(LIST);
    upstream.fault(/^\/v1\/pets\?/, (_req, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"code":"INVALID_ARGUMENT","message":"no","status":400}'),
    );
    const before = { ...lanes.served };
    const answer = await send(LIST);
    expect(lanes.served.oneCall - before.oneCall).toBe(1);
    expect(lanes.served.fast - before.fast).toBe(0);
    expect(answer.body).toMatchObject({
      data: null,
      errors: [{ message: 'no', path: ['pets'], extensions: { code: 'INVALID_ARGUMENT', status: 400 } }],
    });
    expect(upstream.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
    expect(operationLine()).toMatchObject({ upstreamCalls: 1 });
  });

  it('refuses a key that is no bearer key before any call, as Yoga does', async () => {
    await prepare(LIST);
    const answer = await send(LIST, undefined, 'Basic abc');
    expect(answer.body).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
    expect(upstream.requests).toHaveLength(0);
  });

  it('shares one GET between the same caller’s identical requests in flight', async () => {
    await prepare(LIST);
    const held = upstream.hold(/^\/v1\/pets\?/, 200);
    const before = { ...lanes.served };
    const answers = await Promise.all([send(LIST), send(LIST), send(LIST)]);
    expect(held).toHaveLength(1);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(lanes.served.oneCall - before.oneCall).toBe(3);
  });

  it('cancels its call upstream when the client goes away, and logs the client gone', async () => {
    await prepare(LIST);
    const held = upstream.hold(/^\/v1\/pets\?/, 3000);
    const gone = new AbortController();
    const sent = request(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify({ query: LIST }),
      signal: gone.signal,
    }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 3000, interval: 5 });
    gone.abort();
    await sent;
    await vi.waitFor(() => expect(held[0]?.abortedAt).toBeDefined(), { timeout: 1000, interval: 5 });
    await vi.waitFor(
      () => expect(operationLine()).toMatchObject({ outcome: 'client_gone', status: 499, upstreamCalls: 1 }),
      {
        timeout: 1000,
        interval: 5,
      },
    );
  });
});

// A batch whose entries are all one-call operations asking for different lists
// (src/fast-lane/batch.ts, callEntriesOnce): each entry's GET through the client's callback, the
// array written once all have answered. batches.test.ts holds its bytes to Yoga's.

const A = { query: '{ pets(limit: 2) { id } }' };
const B = {
  query: 'query B($s: PetStatus) { pets(limit: 3, status: $s) { id name } }',
  variables: { s: 'SOLD' },
};

async function sendBody(body: unknown) {
  const response = await request(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTH },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, body: (await response.body.json()) as unknown };
}

/** Sends each entry alone, then the batch, until the fast lane has both prepared; then a clean slate. */
async function prepareBatch(entries: unknown[]) {
  for (let i = 0; i < 3; i++) {
    for (const entry of entries) await sendBody(entry);
    await sendBody(entries);
  }
  upstream.requests.length = 0;
  logs.length = 0;
}

const gets = () => upstream.requests.filter((r) => r.method === 'GET').map((r) => r.path);
const operationLines = () =>
  logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => 'upstreamCalls' in line);

describe("a batch's one-call path", () => {
  it('answers different lists itself: one GET each, a line per entry with its own call', async () => {
    await prepareBatch([A, B]);
    const before = { ...lanes.served };
    const answer = await sendBody([A, B]);
    expect(answer.status).toBe(200);
    const [first, second] = answer.body as Array<{ data: { pets: Array<Record<string, unknown>> } }>;
    expect(first?.data.pets).toHaveLength(2);
    expect(Object.keys(first?.data.pets[0] ?? {})).toEqual(['id']);
    expect(second?.data.pets.length).toBeGreaterThan(0);
    expect(Object.keys(second?.data.pets[0] ?? {})).toEqual(['id', 'name']);
    expect(lanes.served.oneCall - before.oneCall).toBe(1);
    expect(lanes.served.fast - before.fast).toBe(1);
    expect(gets().sort()).toEqual(['/v1/pets?limit=2', '/v1/pets?limit=3&status=sold']);
    expect(operationLines()).toMatchObject([
      { batch: { index: 0, size: 2 }, upstreamCalls: 1, status: 200, outcome: 'ok' },
      { batch: { index: 1, size: 2 }, upstreamCalls: 1, status: 200, outcome: 'ok' },
    ]);
  });

  it('leaves the same list twice to the shared loaders: one GET for both', async () => {
    await prepareBatch([A, A]);
    const before = { ...lanes.served };
    const answer = await sendBody([A, A]);
    expect(answer.status).toBe(200);
    expect(lanes.served.oneCall - before.oneCall).toBe(0);
    expect(lanes.served.fast - before.fast).toBe(1);
    expect(gets()).toEqual(['/v1/pets?limit=2']);
  });

  it('retries a GET the upstream could not answer, and still answers the batch itself', async () => {
    await prepareBatch([A, B]);
    upstream.fault(/^\/v1\/pets\?limit=2$/, (_req, res) => res.writeHead(503).end(), 1);
    const before = { ...lanes.served };
    const answer = await sendBody([A, B]);
    expect(answer.status).toBe(200);
    expect((answer.body as Array<{ data: { pets: unknown[] } }>)[0]?.data.pets).toHaveLength(2);
    expect(lanes.served.oneCall - before.oneCall).toBe(1);
    expect(lanes.served.fast - before.fast).toBe(1);
    expect(lanes.served.planned - before.planned).toBe(1);
    expect(gets().sort()).toEqual(['/v1/pets?limit=2', '/v1/pets?limit=2', '/v1/pets?limit=3&status=sold']);
  });

  it('hands a failed call on the usual way without calling again: the error where it belongs', async () => {
    await prepareBatch([A, B]);
    upstream.fault(/^\/v1\/pets\?limit=3/, (_req, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"code":"INVALID_ARGUMENT","message":"no","status":400}'),
    );
    const before = { ...lanes.served };
    const answer = await sendBody([A, B]);
    expect(lanes.served.oneCall - before.oneCall).toBe(1);
    expect(answer.body).toMatchObject([
      { data: { pets: [{ id: expect.any(String) }, { id: expect.any(String) }] } },
      { data: null, errors: [{ message: 'no', extensions: { code: 'INVALID_ARGUMENT', status: 400 } }] },
    ]);
    // Each list asked for once, though a second lane wrote the answer.
    expect(gets().sort()).toEqual(['/v1/pets?limit=2', '/v1/pets?limit=3&status=sold']);
    expect(operationLines().map((line) => line.upstreamCalls)).toEqual([1, 1]);
  });

  it('cancels every call upstream when the client goes away, and logs each entry gone', async () => {
    await prepareBatch([A, B]);
    const held = upstream.hold(/^\/v1\/pets\?/, 3000);
    const gone = new AbortController();
    const sent = request(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify([A, B]),
      signal: gone.signal,
    }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(held).toHaveLength(2), { timeout: 3000, interval: 5 });
    gone.abort();
    await sent;
    await vi.waitFor(() => expect(held.every((h) => h.abortedAt !== undefined)).toBe(true), {
      timeout: 1000,
      interval: 5,
    });
    await vi.waitFor(
      () =>
        expect(operationLines()).toMatchObject([
          { outcome: 'client_gone', status: 499, batch: { index: 0, size: 2 } },
          { outcome: 'client_gone', status: 499, batch: { index: 1, size: 2 } },
        ]),
      { timeout: 1000, interval: 5 },
    );
  });
});
