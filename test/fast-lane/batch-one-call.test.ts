// @tier integration

import { request } from 'undici';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import type { Lanes } from '../../src/policy/prepared-operations.ts';
import { type FakeUpstream, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';

// A batch whose entries are all one-call operations asking for different lists
// (src/fast-lane/batch.ts, callEntriesOnce): each entry's GET through the client's callback, the
// array written once all have answered. batches.test.ts holds its bytes to Yoga's; here, which
// batches take it, what its log lines say, and that a failure, a retry or a client gone act as on
// the usual path, with no call sent twice.

const TOKEN = 'batch-one-call-token';
const AUTH = `Bearer ${TOKEN}`;
const A = { query: '{ pets(limit: 2) { id } }' };
const B = {
  query: 'query B($s: PetStatus) { pets(limit: 3, status: $s) { id name } }',
  variables: { s: 'SOLD' },
};

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

async function send(body: unknown) {
  const response = await request(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTH },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, body: (await response.body.json()) as unknown };
}

/** Sends each entry alone, then the batch, until the fast lane has both prepared; then a clean slate. */
async function prepare(entries: unknown[]) {
  for (let i = 0; i < 3; i++) {
    for (const entry of entries) await send(entry);
    await send(entries);
  }
  upstream.requests.length = 0;
  logs.length = 0;
}

const gets = () => upstream.requests.filter((r) => r.method === 'GET').map((r) => r.path);
const operationLines = () =>
  logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => 'upstreamCalls' in line);

describe("a batch's one-call path", () => {
  it('answers different lists itself: one GET each, a line per entry, the calls on the first', async () => {
    await prepare([A, B]);
    const before = { ...lanes.served };
    const answer = await send([A, B]);
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
      { batch: { index: 0, size: 2 }, upstreamCalls: 2, status: 200, outcome: 'ok' },
      { batch: { index: 1, size: 2 }, upstreamCalls: 0, status: 200, outcome: 'ok' },
    ]);
  });

  it('leaves the same list twice to the shared loaders: one GET for both', async () => {
    await prepare([A, A]);
    const before = { ...lanes.served };
    const answer = await send([A, A]);
    expect(answer.status).toBe(200);
    expect(lanes.served.oneCall - before.oneCall).toBe(0);
    expect(lanes.served.fast - before.fast).toBe(1);
    expect(gets()).toEqual(['/v1/pets?limit=2']);
  });

  it('retries a GET the upstream could not answer, and still answers the batch itself', async () => {
    await prepare([A, B]);
    upstream.fault(/^\/v1\/pets\?limit=2$/, (_req, res) => res.writeHead(503).end(), 1);
    const before = { ...lanes.served };
    const answer = await send([A, B]);
    expect(answer.status).toBe(200);
    expect(lanes.served.fast - before.fast).toBe(1);
    expect(gets().filter((path) => path === '/v1/pets?limit=2')).toHaveLength(2);
  });

  it('hands a failed call on the usual way without calling again: the error where it belongs', async () => {
    await prepare([A, B]);
    upstream.fault(/^\/v1\/pets\?limit=3/, (_req, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"code":"INVALID_ARGUMENT","message":"no","status":400}'),
    );
    const before = { ...lanes.served };
    const answer = await send([A, B]);
    expect(lanes.served.oneCall - before.oneCall).toBe(1);
    expect(answer.body).toMatchObject([
      { data: { pets: [{ id: expect.any(String) }, { id: expect.any(String) }] } },
      { data: null, errors: [{ message: 'no', extensions: { code: 'INVALID_ARGUMENT', status: 400 } }] },
    ]);
    // Each list asked for once, though a second lane wrote the answer.
    expect(gets().sort()).toEqual(['/v1/pets?limit=2', '/v1/pets?limit=3&status=sold']);
    expect(operationLines().map((line) => line.upstreamCalls)).toEqual([2, 0]);
  });

  it('cancels every call upstream when the client goes away, and logs each entry gone', async () => {
    await prepare([A, B]);
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
