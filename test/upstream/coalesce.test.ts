// @tier integration

import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.ts';
import { createUpstreamClient, type Deadline, type UpstreamClient } from '../../src/upstream/client.ts';
import { UpstreamResponseError, UpstreamTimeoutError } from '../../src/upstream/errors.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { CreatePet, ListPets } from '../support/operations.ts';

// Identical GETs of one caller in flight at the same time are one upstream request. The fake holds
// its answers back (SLOW_MS) so that concurrent operations really overlap, and counts requests.

const ALICE = 'alice-coalesce-token';
const BOB = 'bob-coalesce-token';
const SLOW_MS = 150;
const PETS = '[{"id":1,"name":"Rex","categoryId":9,"status":"available"}]';

let upstream: FakeUpstream;

/** Answers matching requests after SLOW_MS, with `status` and `body`; notes a request cut off early. */
function slowly(status = 200, body = PETS, onCut?: () => void) {
  upstream.fault(/^\/v1\/pets/, (_req, res: ServerResponse) => {
    const timer = setTimeout(() => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    }, SLOW_MS);
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableEnded) onCut?.();
    });
  });
}

const gets = () => upstream.requests.filter((r) => r.method === 'GET');

beforeAll(async () => {
  upstream = await startFakeUpstream();
  for (const token of [ALICE, BOB]) upstream.tokens.add(token);
  for (const token of [ALICE, BOB]) upstream.seed(token, { id: '1', name: 'Rex', categoryId: '9' });
});

afterAll(async () => {
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
  upstream.clearFaults();
});

describe('coalescing through the gateway', () => {
  let gateway: RunningGateway;
  let off: RunningGateway;
  const metrics = createMetrics();

  beforeAll(async () => {
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      client: { observers: [metrics.upstream] },
      gateway: { metrics },
    });
    off = await startGateway({ upstreamUrl: upstream.url, client: { coalesce: false } });
  });

  afterAll(async () => {
    await gateway.close();
    await off.close();
  });

  const coalescedCount = async () =>
    (await metrics.registry.getSingleMetric('pet_gateway_upstream_coalesced_total')?.get())?.values.find(
      (value) => value.labels.route === 'GET /pets',
    )?.value ?? 0;

  it('makes one upstream GET for two concurrent operations of one caller, each with its own answer', async () => {
    slowly();
    const before = await coalescedCount();
    const [a, b] = await Promise.all([
      execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`),
      execute(gateway.url, ListPets, { limit: 5 }, `bearer ${ALICE}`),
    ]);
    expect(a.errors).toBeUndefined();
    expect(b.data).toEqual(a.data);
    expect(a.data?.pets.map((pet) => pet.name)).toEqual(['Rex']);
    expect(gets()).toHaveLength(1);
    expect((await coalescedCount()) - before).toBe(1);
  });

  it('never shares a GET between two callers', async () => {
    slowly();
    await Promise.all([
      execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`),
      execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${BOB}`),
    ]);
    expect(
      gets()
        .map((r) => r.authorization)
        .sort(),
    ).toEqual([`Bearer ${ALICE}`, `Bearer ${BOB}`]);
  });

  it('never shares a finished answer: a later operation makes its own GET', async () => {
    await execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`);
    await execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`);
    expect(gets()).toHaveLength(2);
  });

  it('never coalesces a POST: two concurrent createPet are two POSTs', async () => {
    upstream.fault(/^\/v1\/pets$/, (_req, res) => {
      setTimeout(() => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end('{"id":5,"name":"Kit","categoryId":9}');
      }, SLOW_MS);
    });
    const results = await Promise.all(
      [1, 2].map(() =>
        execute(gateway.url, CreatePet, { input: { name: 'Kit', categoryId: '9' } }, `Bearer ${ALICE}`),
      ),
    );
    for (const result of results) expect(result.errors).toBeUndefined();
    expect(upstream.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('gives the upstream error to every operation that waited on the call', async () => {
    slowly(500, '{"code":"BOOM","message":"exploded","status":500}');
    const results = await Promise.all(
      [1, 2, 3].map(() => execute(gateway.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`)),
    );
    for (const result of results) expect(result.errors?.[0]?.extensions?.code).toBe('BOOM');
    expect(gets()).toHaveLength(1);
  });

  it('with UPSTREAM_COALESCE=off, makes one GET per operation', async () => {
    slowly();
    await Promise.all([
      execute(off.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`),
      execute(off.url, ListPets, { limit: 5 }, `Bearer ${ALICE}`),
    ]);
    expect(gets()).toHaveLength(2);
  });
});

describe('coalescing in the upstream client', () => {
  let client: UpstreamClient;

  beforeAll(() => {
    client = createUpstreamClient({ baseUrl: new URL(upstream.url), timeoutMs: 2000, connections: 4 });
  });

  afterAll(async () => {
    await client.close();
  });

  // Deadlines of their own length, as an operation's would be; released after each test.
  const deadlines: Deadline[] = [];
  const deadlineIn = (ms: number) => {
    const deadline = client.deadline(ms);
    deadlines.push(deadline);
    return deadline;
  };
  afterEach(() => {
    for (const deadline of deadlines.splice(0)) deadline.release();
  });

  it('hands each waiter objects of its own', async () => {
    slowly();
    const auth = `Bearer ${ALICE}`;
    const [a, b] = await Promise.all([
      client.listPets(auth, { limit: 5 }),
      client.listPets(auth, { limit: 5 }),
    ]);
    expect(gets()).toHaveLength(1);
    expect(b).toEqual(a);
    expect(b).not.toBe(a);
    (a[0] as { name: string }).name = 'changed';
    expect(b[0]?.name).toBe('Rex');
  });

  it('fails each waiter with an error object of its own', async () => {
    slowly(404, '{"code":"PET_NOT_FOUND","message":"no","status":404}');
    const auth = `Bearer ${ALICE}`;
    const errors = await Promise.all(
      [1, 2].map(() => client.getPet(auth, '7').catch((error: unknown) => error)),
    );
    expect(gets()).toHaveLength(1);
    for (const error of errors) expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(errors[0]).not.toBe(errors[1]);
  });

  it('times out a waiter whose deadline passes without cancelling the call for the others', async () => {
    let cut = false;
    slowly(200, PETS, () => {
      cut = true;
    });
    const auth = `Bearer ${ALICE}`;
    const started = performance.now();
    const [early, late] = await Promise.allSettled([
      client.listPets(auth, { limit: 5 }, deadlineIn(40)),
      client.listPets(auth, { limit: 5 }, deadlineIn(2000)),
    ]);
    expect(early.status).toBe('rejected');
    expect((early as PromiseRejectedResult).reason).toBeInstanceOf(UpstreamTimeoutError);
    expect(late.status).toBe('fulfilled');
    expect((late as PromiseFulfilledResult<unknown>).value).toEqual([
      { id: '1', name: 'Rex', categoryId: '9', status: 'available' },
    ]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_MS - 5);
    expect(gets()).toHaveLength(1);
    expect(cut).toBe(false);
  });

  it('cancels the shared call once every waiter has given up, and the next call starts afresh', async () => {
    let cut = false;
    slowly(200, PETS, () => {
      cut = true;
    });
    const auth = `Bearer ${ALICE}`;
    const results = await Promise.allSettled([
      client.listPets(auth, { limit: 5 }, deadlineIn(30)),
      client.listPets(auth, { limit: 5 }, deadlineIn(50)),
    ]);
    for (const result of results) {
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(UpstreamTimeoutError);
    }
    // The upstream sees the exchange cut once the last waiter gave up (not at the first one's deadline).
    await vi.waitFor(() => expect(cut).toBe(true), { timeout: 2000, interval: 5 });
    upstream.clearFaults();
    const fresh = await client.listPets(auth, { limit: 5 });
    expect(fresh.map((pet) => pet.name)).toEqual(['Rex']);
    expect(gets()).toHaveLength(2);
  });
});
