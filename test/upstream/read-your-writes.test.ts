// @tier integration

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createMemoryCache } from '../../src/stores/response-cache.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { subscribeSse } from '../support/sse.ts';

// "Every read that starts after a write was answered sees it" (#64 row 1, docs/limits.md), held
// against random interleavings of two keys' reads and writes, over an upstream that reads its store
// when a request arrives and answers later: a list in flight is the list as it was. A read that
// joined a call started before the write, or a cached list fetched before it, would miss the pet.

const KEYS = ['ryw-key-a', 'ryw-key-b'] as const;

/** An upstream with one store for every key, answering each request after the delay it is told. */
async function startSlowStore() {
  const pets: string[] = [];
  let nextId = 1;
  const delays: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const token = req.headers.authorization?.replace(/^Bearer /, '');
      const later = (status: number, body: string) =>
        setTimeout(() => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(body);
        }, delays.shift() ?? 0);
      if (!KEYS.includes(token as (typeof KEYS)[number]))
        return later(401, '{"code":"UNAUTHORIZED","message":"no","status":401}');
      if (req.method === 'POST') {
        const { name } = JSON.parse(Buffer.concat(chunks).toString()) as { name: string };
        const pet = `{"id":${nextId++},"name":${JSON.stringify(name)},"categoryId":1}`;
        pets.push(pet); // kept on arrival: the answer comes later
        return later(201, pet);
      }
      later(200, `[${pets.join(',')}]`); // the list as it is on arrival
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    reset(next: number[]) {
      pets.length = 0;
      delays.length = 0;
      delays.push(...next);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Step {
  write: boolean;
  key: 0 | 1;
  /** Milliseconds after the previous step started. */
  gap: number;
  /** How long the upstream takes to answer the request this step sends. */
  upstreamMs: number;
}

const step = fc.record({
  write: fc.boolean(),
  key: fc.constantFrom<0 | 1>(0, 1),
  gap: fc.integer({ min: 0, max: 15 }),
  upstreamMs: fc.integer({ min: 0, max: 40 }),
});

/** The issue's own case: a list in flight, a quick create, the same list asked again. */
const STALE_FLIGHT: Step[] = [
  { write: false, key: 0, gap: 0, upstreamMs: 200 },
  { write: true, key: 0, gap: 50, upstreamMs: 0 },
  { write: false, key: 0, gap: 50, upstreamMs: 0 },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(gateway: RunningGateway, key: string, query: string) {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

/** The ids of a `pets` answer; a clear failure when there is none. */
function petIds(body: { data?: Record<string, unknown>; errors?: unknown[] }): string[] {
  const pets = body.data?.pets;
  if (!Array.isArray(pets)) throw new Error(`no pets in ${JSON.stringify(body)}`);
  return pets.map((pet: { id: string }) => pet.id);
}

/** The id a `createPet` answered; a clear failure when there is none. */
function createdId(body: { data?: Record<string, unknown>; errors?: unknown[] }): string {
  const pet = body.data?.createPet as { id?: string } | undefined;
  if (typeof pet?.id !== 'string') throw new Error(`no pet created: ${JSON.stringify(body)}`);
  return pet.id;
}

/** Runs the steps at their times; every read's answer, and when each write was answered. */
async function run(gateway: RunningGateway, steps: Step[]) {
  const writes: Array<{ key: number; id: string; answeredAt: number }> = [];
  const reads: Array<{ key: number; startedAt: number; ids: string[] }> = [];
  const pending: Promise<void>[] = [];
  for (const [index, { write, key, gap }] of steps.entries()) {
    if (gap > 0) await sleep(gap);
    const token = KEYS[key];
    if (write) {
      const mutation = `mutation { createPet(input: { name: "p${index}", categoryId: "1" }) { id } }`;
      pending.push(
        post(gateway, token, mutation).then((body) => {
          writes.push({ key, id: createdId(body), answeredAt: performance.now() });
        }),
      );
    } else {
      const startedAt = performance.now();
      pending.push(
        post(gateway, token, '{ pets(limit: 100) { id } }').then((body) => {
          reads.push({ key, startedAt, ids: petIds(body) });
        }),
      );
    }
  }
  await Promise.all(pending);
  return { writes, reads };
}

let store: Awaited<ReturnType<typeof startSlowStore>>;
beforeAll(async () => {
  store = await startSlowStore();
});
afterAll(() => store.close());

describe.each([
  { coalesce: true, cache: false },
  { coalesce: false, cache: false },
  { coalesce: true, cache: true },
  { coalesce: false, cache: true },
])('read your own writes (coalescing $coalesce, memory cache $cache)', ({ coalesce, cache }) => {
  it('every read that starts after a write was answered sees it', async () => {
    const memory = cache ? createMemoryCache() : undefined;
    const gateway = await startGateway({
      upstreamUrl: store.url,
      client: { coalesce },
      ...(memory ? { cache: { store: memory, ttlMs: 60_000 } } : {}),
    });
    try {
      // Both lanes warmed (the fast lane serves an operation once Yoga has answered it), then a
      // write per key, so the first list of the first run is not served from the cache.
      for (const key of KEYS) {
        for (let i = 0; i < 2; i++) await post(gateway, key, '{ pets(limit: 100) { id } }');
        await post(gateway, key, 'mutation { createPet(input: { name: "w", categoryId: "1" }) { id } }');
      }
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 8 }), async (steps) => {
          // An empty store; ids go on from the last run's, so no list of an earlier run has them.
          store.reset(steps.map((each) => each.upstreamMs));
          const { writes, reads } = await run(gateway, steps);
          for (const read of reads) {
            // The same key's writes always; another key's only without the cache, whose lists
            // are per key and may be up to its TTL old to everyone else (docs/limits.md).
            const owed = writes.filter(
              (write) => write.answeredAt < read.startedAt && (write.key === read.key || !cache),
            );
            for (const write of owed) expect(read.ids).toContain(write.id);
          }
        }),
        { numRuns: 12, examples: [[STALE_FLIGHT]] },
      );
    } finally {
      await gateway.close();
      await memory?.close();
    }
  });
});

describe('read your own writes through two instances sharing a cache', () => {
  it('never joins a call sent before a create made through the other instance', async () => {
    // One store for both, as Redis is: the create through `b` gives the key a new list generation,
    // and `a` must not serve (or store under it) the list its own earlier call is still fetching.
    const shared = createMemoryCache();
    const cache = { store: shared, ttlMs: 60_000 };
    const [a, b] = await Promise.all([
      startGateway({ upstreamUrl: store.url, cache }),
      startGateway({ upstreamUrl: store.url, cache }),
    ]);
    try {
      const key = KEYS[0];
      await post(b, key, 'mutation { createPet(input: { name: "first", categoryId: "1" }) { id } }');
      store.reset([300, 0, 0]);
      const before = post(a, key, '{ pets(limit: 100) { id } }');
      await sleep(50);
      const created = await post(
        b,
        key,
        'mutation { createPet(input: { name: "after", categoryId: "1" }) { id } }',
      );
      const id = createdId(created);
      const after = await post(a, key, '{ pets(limit: 100) { id } }');
      expect(petIds(after)).toContain(id);
      expect((await before).errors).toBeUndefined();
      // And what `a` stored is the list with the pet, for every instance.
      const again = await post(b, key, '{ pets(limit: 100) { id } }');
      expect(petIds(again)).toContain(id);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await shared.close();
    }
  });
});

describe('read your own writes on a live list', () => {
  it('shows the pet to the writer’s open subscription, though a list sent before the write is in flight', async () => {
    // The create wakes the subscription at once (LIVE_POLL_MS is far off); its poll must not join
    // the query's call still out, which reads the store as it was.
    const settings = loadConfig({ LIVE_POLL_MS: '30000' }).live;
    const gateway = await startGateway({ upstreamUrl: store.url, config: { live: settings } });
    try {
      const key = KEYS[1];
      store.reset([]);
      const subscription = await subscribeSse(
        gateway.url,
        { query: 'subscription { pets(limit: 100) { id } }' },
        `Bearer ${key}`,
      );
      await subscription.waitForEvents(1);
      store.reset([400, 0, 0]);
      const before = post(gateway, key, '{ pets(limit: 100) { id } }');
      await sleep(50);
      const created = await post(
        gateway,
        key,
        'mutation { createPet(input: { name: "seen", categoryId: "1" }) { id } }',
      );
      const id = createdId(created);
      await subscription.waitForEvents(2, 2000);
      expect(petIds({ data: subscription.events[1]?.data as Record<string, unknown> })).toContain(id);
      expect((await before).errors).toBeUndefined();
      subscription.close();
    } finally {
      await gateway.close();
    }
  });
});

describe('a write that timed out after the store kept it (#64 row 10)', () => {
  it('drops the writer’s cached lists all the same: the next list shows the pet', async () => {
    const memory = createMemoryCache();
    const gateway = await startGateway({
      upstreamUrl: store.url,
      timeoutMs: 300,
      cache: { store: memory, ttlMs: 60_000 },
    });
    try {
      const key = KEYS[0];
      store.reset([]);
      const list = '{ pets(limit: 100) { id } }';
      expect((await post(gateway, key, list)).data?.pets).toEqual([]);
      store.reset([600]); // the store keeps the pet at once, and answers after the deadline
      const created = await post(
        gateway,
        key,
        'mutation { createPet(input: { name: "late", categoryId: "1" }) { id } }',
      );
      expect(JSON.stringify(created.errors)).toContain('UPSTREAM_TIMEOUT');
      expect(petIds(await post(gateway, key, list))).toHaveLength(1);
    } finally {
      await gateway.close();
      await memory.close();
    }
  });
});
