// @tier integration

import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { COST_META } from '../../src/mcp/graphql-call.ts';
import { call, connectMcp } from '../mcp/client.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';

// Issue #66's table, read from real answers with COST_BUDGET_PER_MINUTE=1000: for each way an
// operation comes in (a list, three aliased lists, a deferred list, a batch of three, a graphql-ws
// subscription, an MCP tool call), its estimate, its actual, the headers, and the budget left.
// The store holds 3 pets; a pet costs 1 and each of its fields 1.

const KEY = 'cost-table-key';
const AUTH = `Bearer ${KEY}`;
const BUDGET = 1000;

interface Cost {
  estimated: number;
  actual?: number;
  throttleStatus?: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number };
}
interface Row {
  way: string;
  estimated: number;
  actual: number | undefined;
  headers: string;
  left: number | undefined;
}

let upstream: FakeUpstream;
let gateway: RunningGateway;
const rows: Row[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(KEY);
  for (const [id, name] of [
    ['1', 'Rex'],
    ['2', 'Tom'],
    ['3', 'Kit'],
  ] as const)
    upstream.seed(KEY, { id, name, categoryId: '1', status: 'available' });
  gateway = await startGateway({
    upstreamUrl: upstream.url,
    limits: { ...DEFAULT_LIMITS, costReport: true },
    config: {
      costBudget: { perMinute: BUDGET, store: 'memory' },
      live: { pollMs: 60_000, maxPerKey: 10, maxStreams: 100, slowReaderMs: 30_000, store: 'memory' },
    },
  });
});

afterAll(async () => {
  console.log(
    [
      '| way in | estimated | actual | headers | budget left |',
      '|---|---|---|---|---|',
      ...rows.map(
        (r) => `| ${r.way} | ${r.estimated} | ${r.actual ?? '–'} | ${r.headers} | ${r.left ?? '–'} |`,
      ),
    ].join('\n'),
  );
  await gateway?.close();
  await upstream?.close();
});

const headersOf = (headers: Headers) =>
  ['x-cost-estimated', 'x-cost-actual', 'x-cost-budget-available']
    .map((name) => `${name.replace('x-cost-', '')}: ${headers.get(name) ?? '–'}`)
    .join(', ');

function record(way: string, cost: Cost | undefined, headers = '–'): Cost {
  expect(cost).toBeDefined();
  const { estimated, actual, throttleStatus } = cost as Cost;
  rows.push({ way, estimated, actual, headers, left: throttleStatus?.currentlyAvailable });
  if (throttleStatus) {
    expect(throttleStatus.maximumAvailable).toBe(BUDGET);
    expect(throttleStatus.currentlyAvailable).toBeLessThan(BUDGET);
  }
  return cost as Cost;
}

describe('what each way in costs, and what the budget has left', () => {
  it('a list: 20 asked, 3 back', async () => {
    const answer = await post(
      gateway.url,
      { query: '{ pets(limit: 20) { id name } }' },
      { authorization: AUTH },
    );
    const cost = record(
      'a list',
      (answer.body as { extensions?: { cost?: Cost } }).extensions?.cost,
      headersOf(answer.headers),
    );
    expect(cost).toMatchObject({ estimated: 60, actual: 9 });
    expect(answer.headers.get('x-cost-budget-available')).toBe(
      String(cost.throttleStatus?.currentlyAvailable),
    );
  });

  it('three aliased lists', async () => {
    const query = '{ a: pets(limit: 5) { id } b: pets(limit: 10) { name } c: pets(limit: 20) { id name } }';
    const answer = await post(gateway.url, { query }, { authorization: AUTH });
    const cost = record(
      'three aliased lists',
      (answer.body as { extensions?: { cost?: Cost } }).extensions?.cost,
      headersOf(answer.headers),
    );
    expect(cost).toMatchObject({ estimated: 90, actual: 21 });
  });

  it('a deferred list: the estimate first, the actual with the last part', async () => {
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', authorization: AUTH },
      body: JSON.stringify({ query: '{ pets(limit: 20) { id ... @defer { name } } }' }),
    });
    const text = await response.text();
    const parts = text
      .split('\r\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { extensions?: { cost?: Cost }; hasNext?: boolean });
    expect(parts[0]?.extensions?.cost).toEqual({ estimated: 60 });
    const last = parts.at(-1);
    expect(last?.hasNext).toBe(false);
    const cost = record('a deferred list', last?.extensions?.cost, headersOf(response.headers));
    expect(cost).toMatchObject({ estimated: 60, actual: 9 });
  });

  it('a batch of three: each entry its own, the headers the sum', async () => {
    const answer = await post(
      gateway.url,
      [
        { query: '{ pets(limit: 1) { id } }' },
        { query: '{ pets(limit: 2) { name } }' },
        { query: '{ pets(limit: 3) { id name } }' },
      ],
      { authorization: AUTH },
    );
    const entries = answer.body as Array<{ extensions?: { cost?: Cost } }>;
    expect(
      entries.map((entry) => [entry.extensions?.cost?.estimated, entry.extensions?.cost?.actual]),
    ).toEqual([
      [2, 2],
      [4, 4],
      [9, 9],
    ]);
    expect(answer.headers.get('x-cost-estimated')).toBe('15');
    expect(answer.headers.get('x-cost-actual')).toBe('15');
    const lowest = Math.min(
      ...entries.map((entry) => entry.extensions?.cost?.throttleStatus?.currentlyAvailable ?? BUDGET),
    );
    expect(answer.headers.get('x-cost-budget-available')).toBe(String(lowest));
    record(
      'a batch of three (sum)',
      {
        estimated: 15,
        actual: 15,
        throttleStatus: { maximumAvailable: BUDGET, currentlyAvailable: lowest, restoreRate: 16.67 },
      },
      headersOf(answer.headers),
    );
  });

  it('a subscription over graphql-ws: charged as it opens, each event its own actual', async () => {
    const client = createClient({
      url: gateway.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: AUTH },
      retryAttempts: 0,
    });
    try {
      const first = await new Promise<{ extensions?: { cost?: Cost } }>((resolve, reject) => {
        const stop = client.subscribe(
          { query: 'subscription { pets(limit: 20) { id name } }' },
          {
            next: (event) => {
              stop();
              resolve(event as { extensions?: { cost?: Cost } });
            },
            error: reject,
            complete: () => {},
          },
        );
      });
      const cost = record('a subscription (graphql-ws), first event', first.extensions?.cost);
      expect(cost).toMatchObject({ estimated: 60, actual: 9 });
      expect(cost.throttleStatus).toBeDefined();
    } finally {
      await client.dispose();
    }
  });

  it('an MCP tool call: the cost in the result’s _meta', async () => {
    const client = await connectMcp(gateway.url.replace(/\/graphql$/, ''), KEY);
    try {
      const result = await call(client, 'list_pets', { limit: 20 });
      expect(result.isError).toBeFalsy();
      const pets = (result.structuredContent as { pets: Array<Record<string, unknown>> }).pets;
      const cost = record('an MCP tool call (list_pets)', result._meta?.[COST_META] as Cost | undefined);
      // A pet is 1 and each field it answered 1.
      expect(cost.actual).toBe(pets.length * (1 + Object.keys(pets[0] ?? {}).length));
      expect(cost.estimated).toBe(20 * (1 + Object.keys(pets[0] ?? {}).length));
    } finally {
      await client.close();
    }
  });

  it('the budget went down by what each operation cost, never by its estimate', () => {
    const left = rows.map((row) => row.left).filter((value): value is number => value !== undefined);
    // Restored at 16.67 a second: within the run's second, what is left is at most the budget less
    // the actuals spent, plus what came back meanwhile.
    const spent = rows.reduce((sum, row) => sum + (row.actual ?? 0), 0);
    expect(Math.min(...left)).toBeGreaterThanOrEqual(BUDGET - spent - 60);
    expect(Math.min(...left)).toBeLessThan(BUDGET);
  });
});
