// @tier slow: npm start, restarted, for the start-up sentences

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.ts';
import { startPetstore } from '../../src/petstore/server.ts';
import { createMemoryCache, createRedisCache, type ResponseCache } from '../../src/stores/response-cache.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { postJson } from '../support/graphql.ts';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';
import { haveRedisServer, startRedis } from '../support/redis.ts';
import { sentence } from './claims.ts';
import { commands, difference, examples } from './examples.ts';

// Sentences of the README and docs/ that say how the gateway behaves, each held true against a
// running gateway. A test is named by its sentence's beginning and quotes the whole sentence (page
// and line) when it fails; rewording a sentence fails its test until the test is reworded too.

const AUTH = 'Bearer claims';
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add('claims');
  for (const id of ['1', '2', '3', '7', '8'])
    upstream.seed('claims', { id, name: `Pet ${id}`, categoryId: '1', status: 'available' });
});

afterAll(async () => {
  await upstream.close();
});

/** The upstream requests one GraphQL request made, as `METHOD path`. */
async function upstreamCalls(gateway: RunningGateway, query: string): Promise<string[]> {
  const before = upstream.requests.length;
  const answer = await postJson(gateway.url, { query }, AUTH);
  expect(answer.errors, query).toBeUndefined();
  return upstream.requests.slice(before).map((request) => `${request.method} ${request.path}`);
}

describe('docs/api.md: “Within one GraphQL request, identical…”', () => {
  const claim = sentence('docs/api.md', 'Within one GraphQL request, identical');
  const shared = sentence('docs/api.md', 'That is all a request shares');
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({ upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await gateway.close();
  });

  // Three times each: Yoga, then compiled, then the fast lane's plan answer the same document.
  it.each([1, 2, 3])(
    'identical lists make one GET /pets, ids one GET each however spelled (run %i)',
    async () => {
      expect(
        await upstreamCalls(gateway, '{ a: pets(limit: 5) { id } b: pets(limit: 5) { name } }'),
        claim,
      ).toEqual(['GET /v1/pets?limit=5']);
      const byId = await upstreamCalls(
        gateway,
        '{ a: pet(id: "7") { id } b: pet(id: "007") { name } c: pet(id: " +7 ") { id } d: pet(id: "8") { id } }',
      );
      expect(byId.sort(), claim).toEqual(['GET /v1/pets/7', 'GET /v1/pets/8']);
    },
  );

  it.each([1, 2, 3])('a pet(id) beside a list that holds it still makes its own call (run %i)', async () => {
    const calls = await upstreamCalls(gateway, '{ pets(limit: 5) { id } pet(id: "3") { name } }');
    expect(calls.sort(), shared).toEqual(['GET /v1/pets/3', 'GET /v1/pets?limit=5']);
  });
});

describe('docs/live.md and docs/api.md: “The reference service (`src/petstore/`) answers the oldest first…”', () => {
  const live = sentence('docs/live.md', 'The reference service (`src/petstore/`) answers the oldest first');
  const api = sentence('docs/api.md', 'The reference service (`src/petstore/`) answers the oldest first');

  it('past `limit`, a pet just created is not in the list; the whole list ends with it', async () => {
    const petstore = await startPetstore({ dbPath: ':memory:', apiKey: 'order' });
    const gateway = await startGateway({ upstreamUrl: petstore.url });
    try {
      const ids = async (limit: number) =>
        (
          await postJson<{ pets: Array<{ id: string }> }>(
            gateway.url,
            { query: `{ pets(limit: ${limit}) { id } }` },
            'Bearer order',
          )
        ).data?.pets.map((pet) => pet.id) ?? [];
      const created = await postJson<{ createPet: { id: string } }>(
        gateway.url,
        { query: 'mutation { createPet(input: { name: "Newest", categoryId: "1" }) { id } }' },
        'Bearer order',
      );
      const id = created.data?.createPet.id as string;
      expect(id).toBeDefined();
      const first = await ids(5);
      expect(first, live).toEqual([...first].sort((a, b) => Number(a) - Number(b)));
      expect(first, api).not.toContain(id);
      expect((await ids(100)).at(-1), live).toBe(id);
    } finally {
      await gateway.close();
      await petstore.close();
    }
  });
});

describe('docs/observability.md: `pet_gateway_response_cache_lookups_total`', () => {
  const row = sentence('docs/observability.md', '`result` (`hit`, `miss`, `error`');

  const stores: Array<[string, () => Promise<{ store: ResponseCache; end(): Promise<void> }>]> = [
    ['memory', async () => ({ store: createMemoryCache(), end: async () => {} })],
  ];
  if (haveRedisServer('claims.test'))
    stores.push([
      'redis',
      async () => {
        const redis = await startRedis();
        const store = createRedisCache(redis.url);
        // Connected before counting, so no lookup is an error of the connection's first moments.
        for (let i = 0; (await store.setIfAbsent('pg:test:ready', '1', 1000)) === undefined; i++) {
          if (i > 100) throw new Error('Redis store never connected');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return { store, end: () => redis.stop() };
      },
    ]);

  it.each(stores)(
    'one cached query asked twice is two lookups: a miss, then a hit (%s)',
    async (_name, open) => {
      const { store, end } = await open();
      const metrics = createMetrics();
      metrics.watchCache(store.stats);
      const gateway = await startGateway({
        upstreamUrl: upstream.url,
        cache: { store, ttlMs: 60_000 },
        gateway: { metrics },
      });
      try {
        const lookups = async () => {
          const text = await (await fetch(`${gateway.origin}/metrics`)).text();
          const counts: Record<string, number> = {};
          for (const match of text.matchAll(
            /^pet_gateway_response_cache_lookups_total\{result="(\w+)"\} (\d+)$/gm,
          ))
            counts[match[1] as string] = Number(match[2]);
          return counts;
        };
        for (const query of ['{ pets(limit: 3) { id } }', '{ pet(id: "2") { name } }']) {
          const before = await lookups();
          const calls = [await upstreamCalls(gateway, query), await upstreamCalls(gateway, query)];
          expect(calls[1], `${query}: the second answer came from the cache`).toEqual([]);
          const after = await lookups();
          const delta = (result: string) => (after[result] ?? 0) - (before[result] ?? 0);
          expect(
            { hit: delta('hit'), miss: delta('miss'), error: delta('error') },
            `${query}: ${row}`,
          ).toEqual({
            hit: 1,
            miss: 1,
            error: 0,
          });
        }
      } finally {
        await gateway.close();
        await store.close();
        await end();
      }
    },
  );
});

describe('start-up settings', () => {
  it('docs/graphiql.md: “With `GRAPHIQL=off` the first line reads…”', async () => {
    const claim = sentence('docs/graphiql.md', 'With `GRAPHIQL=off` the first line reads');
    const shown = /reads `([^`]+)`/.exec(claim)?.[1] as string;
    const gateway = await npmStart({ GRAPHIQL: 'off' });
    try {
      expect(
        difference({ line: 0, lang: 'text', text: shown }, gateway.lines()[0] ?? ''),
        claim,
      ).toBeUndefined();
    } finally {
      await gateway.stop();
    }
  });

  it('README: “To keep one key across restarts, set it yourself…”', async () => {
    const claim = sentence('README.md', 'To keep one key across restarts, set it yourself');
    const env = /`([A-Z_]+)=(\S+) npm start`/.exec(claim);
    expect(env, claim).not.toBeNull();
    for (const run of [1, 2]) {
      const gateway = await npmStart({ [env?.[1] as string]: env?.[2] as string });
      try {
        const answer = await postJson(
          `${gateway.origin}/graphql`,
          { query: '{ pets(limit: 1) { id } }' },
          `Bearer ${env?.[2]}`,
        );
        expect(answer.errors, `start ${run}: ${claim}`).toBeUndefined();
        // The key line names the setting; the chosen key itself is never printed.
        expect(gateway.lines().join('\n'), claim).toContain(
          'API key for this run: the PETSTORE_API_KEY you set (not printed)',
        );
        expect(gateway.lines().join('\n'), claim).not.toContain(env?.[2] as string);
      } finally {
        await gateway.stop();
      }
    }
  });
});

describe('docs/reference-service.md: “To start again from the 36 sample pets…”', () => {
  it('created pets stay across restarts, and the lines shown bring back the sample pets', async () => {
    const claim = sentence(
      'docs/reference-service.md',
      'The sample pets are written only into an empty pets table',
    );
    const how = sentence('docs/reference-service.md', 'To start again from the 36 sample pets');
    const page = readFileSync(new URL('../../docs/reference-service.md', import.meta.url), 'utf8');
    const block = examples('docs/reference-service.md', page).find(
      (example) => example.kind === 'not-run' && example.text.startsWith('rm '),
    );
    const lines = block && 'text' in block ? commands(block.text) : [];
    expect(lines.at(-1), how).toBe('npm start');
    // The store where the default one would be, under a directory of this test's own.
    const dir = mkdtempSync(join(tmpdir(), 'pg-reset-'));
    const env = { PETSTORE_DB: join(dir, 'data/petstore.db') };
    const pets = async (gateway: StartedGateway) =>
      (
        await postJson<{ pets: Array<{ name: string }> }>(
          `${gateway.origin}/graphql`,
          { query: '{ pets(limit: 100) { name } }' },
          `Bearer ${gateway.key}`,
        )
      ).data?.pets.map((pet) => pet.name) ?? [];
    try {
      let gateway = await npmStart(env);
      const sample = await pets(gateway);
      expect(sample).toHaveLength(36);
      const created = await postJson(
        `${gateway.origin}/graphql`,
        { query: 'mutation { createPet(input: { name: "Kept", categoryId: "1" }) { id } }' },
        `Bearer ${gateway.key}`,
      );
      expect(created.errors).toBeUndefined();
      await gateway.stop();

      gateway = await npmStart(env);
      expect(await pets(gateway), claim).toEqual([...sample, 'Kept']);
      await gateway.stop();

      for (const command of lines.slice(0, -1)) execFileSync('sh', ['-e', '-c', command], { cwd: dir });
      gateway = await npmStart(env);
      expect(await pets(gateway), how).toEqual(sample);
      await gateway.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
