// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';
import { type SseSubscription, subscribeSse } from '../support/sse.ts';

const TOKEN = 'cost-key';
const AUTH = `Bearer ${TOKEN}`;
const FOUR = 'id name categoryId status';

let upstream: FakeUpstream;
const gateways: RunningGateway[] = [];
const open: SseSubscription[] = [];

async function gatewayWith(costMode: 'enforce' | 'measure', costReport: boolean) {
  const gateway = await startGateway({
    upstreamUrl: upstream.url,
    limits: { ...DEFAULT_LIMITS, costMode, costReport },
    config: {
      live: { pollMs: 60_000, maxPerKey: 10, maxStreams: 100, slowReaderMs: 30_000, store: 'memory' },
    },
  });
  gateways.push(gateway);
  return gateway;
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  for (const [id, name] of [
    ['1', 'Rex'],
    ['2', 'Tom'],
    ['3', 'Kit'],
  ] as const)
    upstream.seed(TOKEN, { id, name, categoryId: '1', status: 'available' });
});

afterAll(async () => {
  for (const subscription of open) subscription.close();
  await Promise.all(gateways.map((gateway) => gateway.close()));
  await upstream.close();
});

describe('COST_REPORT=on: what each answer cost, read from real answers', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await gatewayWith('enforce', true);
  });

  it('a list of 100 asked, 3 returned: estimated 500, actual 15, in extensions and headers', async () => {
    const answer = await post(
      gateway.url,
      { query: `{ pets(limit: 100) { ${FOUR} } }` },
      { authorization: AUTH },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.extensions).toEqual({ cost: { estimated: 500, actual: 15 } });
    expect(answer.headers.get('x-cost-estimated')).toBe('500');
    expect(answer.headers.get('x-cost-actual')).toBe('15');
  });

  it('three aliased lists within the limit, and a mutation with its base of 10', async () => {
    const lists = await post(
      gateway.url,
      { query: `{ a: pets(limit: 10) { id } b: pets(limit: 10) { id } c: pets(limit: 10) { id } }` },
      { authorization: AUTH },
    );
    expect(lists.body.extensions.cost).toEqual({ estimated: 60, actual: 18 });
    const created = await post(
      gateway.url,
      { query: 'mutation { createPet(input: { name: "Ada", categoryId: "1" }) { id } }' },
      { authorization: AUTH },
    );
    expect(created.body.extensions.cost).toEqual({ estimated: 12, actual: 12 });
  });

  it('a batch of two: each entry its own cost', async () => {
    const answer = await post(
      gateway.url,
      [{ query: '{ pets(limit: 2) { id } }' }, { query: '{ pet(id: "1") { id name } }' }],
      { authorization: AUTH },
    );
    expect(answer.body.map((entry: { extensions: { cost: unknown } }) => entry.extensions.cost)).toEqual([
      { estimated: 4, actual: 4 },
      { estimated: 3, actual: 3 },
    ]);
    // Beside what else the entry reports (pet(id) is deprecated), after it.
    expect(Object.keys(answer.body[1].extensions)).toEqual(['deprecations', 'cost']);
  });

  it('an answer in parts: the estimate first, the actual of everything sent last', async () => {
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', authorization: AUTH },
      body: JSON.stringify({ query: '{ pet(id: "1") { id ... @defer { name } } }' }),
    });
    expect(response.headers.get('x-cost-estimated')).toBe('3');
    expect(response.headers.get('x-cost-actual')).toBeNull();
    const parts = (await response.text())
      .split('\r\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));
    expect(parts[0].extensions.cost).toEqual({ estimated: 3 });
    expect(parts.at(-1).hasNext).toBe(false);
    expect(parts.at(-1).extensions.cost).toEqual({ estimated: 3, actual: 3 });
  });

  it('a subscription: each event its own cost', async () => {
    const subscription = await subscribeSse(
      gateway.url,
      { query: 'subscription { pets(limit: 50) { id } }' },
      AUTH,
    );
    open.push(subscription);
    await subscription.waitForEvents(1);
    const first = subscription.events[0] as { extensions?: { cost?: { estimated: number; actual: number } } };
    expect(first.extensions?.cost?.estimated).toBe(100);
    // Every pet the list holds now (3 seeded, and any the mutation above added): 2 each.
    expect(first.extensions?.cost?.actual).toBeGreaterThanOrEqual(6);
    expect((first.extensions?.cost?.actual ?? 0) % 2).toBe(0);
  });
});

describe('COST_MODE', () => {
  const over = `{ a: pets(limit: 100) { ${FOUR} } b: pets(limit: 100) { ${FOUR} } c: pets(limit: 100) { ${FOUR} } }`;

  it('enforce (the default) refuses over MAX_COST before any upstream call, with the estimate', async () => {
    const gateway = await gatewayWith('enforce', false);
    const before = upstream.requests.length;
    const answer = await post(gateway.url, { query: over }, { authorization: AUTH });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      data: null,
      errors: [
        {
          message: 'The operation costs 1500, over the limit of 1000.',
          extensions: { code: 'COST_LIMIT_EXCEEDED', cost: 1500, limit: 1000 },
        },
      ],
    });
    expect(upstream.requests.length).toBe(before);
    // Off by default: a served answer says nothing of its cost.
    const served = await post(gateway.url, { query: '{ pets(limit: 2) { id } }' }, { authorization: AUTH });
    expect(served.body.extensions).toBeUndefined();
    expect(served.headers.get('x-cost-estimated')).toBeNull();
  });

  it('measure runs what enforce refuses, and reports what it cost', async () => {
    const gateway = await gatewayWith('measure', true);
    const answer = await post(gateway.url, { query: over }, { authorization: AUTH });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.extensions.cost.estimated).toBe(1500);
    expect(answer.headers.get('x-cost-estimated')).toBe('1500');
  });
});
