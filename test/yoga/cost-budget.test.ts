// @tier integration

import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { type CostBudget, createCostBudget } from '../../src/policy/cost-budget.ts';
import { createSharedRedis, type SharedRedis } from '../../src/stores/redis.ts';
import { createCallerKey } from '../../src/upstream/caller-key.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';
import { haveRedisServer, type RunningRedis, startRedis } from '../support/redis.ts';

// COST_BUDGET_PER_MINUTE from real answers: 10 points a minute per caller, an operation charged
// its estimate and refunded down to its actual, refused RATE_LIMITED past the budget, on Yoga's
// lane and on the fast lane (a prepared operation), keyless callers by address.

const KEYS = ['bob', 'carol', 'dave', 'warm-1', 'warm-2', 'warm-3'].map((name) => `budget-${name}`);
const [BOB, CAROL, DAVE, ...WARM] = KEYS.map((key) => `Bearer ${key}`) as [
  string,
  string,
  string,
  ...string[],
];
const THREE = '{ pets(limit: 3) { id name } }';
const TEN = '{ pets(limit: 10) { id name } }';

interface Cost {
  estimated: number;
  actual?: number;
  throttleStatus?: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number };
}
type Answer = { extensions?: { cost?: Cost }; errors?: Array<{ extensions?: { code?: string } }> };

let upstream: FakeUpstream;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  for (const key of [...KEYS, ...KEYS.map((key) => `${key}-ten`)]) {
    upstream.tokens.add(key);
    for (const [id, name] of [
      ['1', 'Rex'],
      ['2', 'Tom'],
      ['3', 'Kit'],
    ] as const)
      upstream.seed(key, { id, name, categoryId: '1', status: 'available' });
  }
});

afterAll(async () => {
  for (const it of open.reverse()) await it.close();
  await upstream.close();
});

async function gatewayWith(fastLane: boolean, costBudget: CostBudget): Promise<RunningGateway> {
  const gateway = await startGateway({
    upstreamUrl: upstream.url,
    limits: { ...DEFAULT_LIMITS, costReport: true },
    gateway: { fastLane, costBudget },
  });
  open.push(gateway, costBudget);
  return gateway;
}

const send = (gateway: RunningGateway, query: string, authorization?: string) =>
  post(gateway.url, { query }, { authorization });

describe.each([
  ['Yoga', false],
  ['the fast lane', true],
])('a budget of 10 points a minute, on %s', (_lane, fastLane) => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await gatewayWith(fastLane, createCostBudget({ perMinute: 10 }));
    // Prepared for the fast lane by other callers, each with a budget of its own to spend.
    for (const warm of WARM) await send(gateway, THREE, warm);
    for (const warm of WARM) await send(gateway, TEN, `${warm}-ten`);
  });

  it('charges the estimate, says what is left, then refuses with when to retry, calling nothing', async () => {
    const served = gateway.lanes?.served.fast ?? 0;
    const first = await send(gateway, THREE, BOB);
    expect(first.status).toBe(200);
    expect((first.body as Answer).extensions?.cost).toEqual({
      estimated: 9,
      actual: 9,
      throttleStatus: { maximumAvailable: 10, currentlyAvailable: 1, restoreRate: 0.17 },
    });
    expect(first.headers.get('x-cost-budget-available')).toBe('1');
    expect(first.headers.get('x-cost-budget-maximum')).toBe('10');
    expect(gateway.lanes?.served.fast ?? 0).toBe(served + (fastLane ? 1 : 0));

    const calls = upstream.requests.length;
    const second = await send(gateway, THREE, BOB);
    expect(second.status).toBe(429);
    expect((second.body as Answer).errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    // 8 points short at one every 6 s.
    const retryAfter = Number(second.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(40);
    expect(retryAfter).toBeLessThanOrEqual(48);
    expect((second.body as Answer).extensions?.cost?.throttleStatus?.currentlyAvailable).toBe(1);
    expect(second.headers.get('x-cost-budget-available')).toBe('1');
    expect(upstream.requests.length).toBe(calls);
  });

  it('an operation dearer than the whole budget takes all of it, and gets back what it did not cost', async () => {
    const answer = await send(gateway, TEN, CAROL);
    expect(answer.status).toBe(200);
    // Estimated 30, charged the budget's 10, cost 9 (3 pets came back): 1 given back.
    expect((answer.body as Answer).extensions?.cost).toMatchObject({
      estimated: 30,
      actual: 9,
      throttleStatus: { currentlyAvailable: 1 },
    });
  });

  it('callers without a key are charged by address, at least a point each', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await send(gateway, '{ __typename }')).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(statuses[10]).toBe(429);
    // A key's own budget is untouched by its address's keyless requests.
    expect((await send(gateway, '{ __typename }', DAVE)).status).toBe(200);
  });
});

describe('a batch: each entry charged on its own', () => {
  const ONE = '{ pets(limit: 1) { id } }';
  const TWO = '{ pets(limit: 2) { id } }';
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await gatewayWith(true, createCostBudget({ perMinute: 10 }));
    // Prepared, with the batch answer's headers learned, by other callers' budgets.
    for (const warm of WARM)
      await post(gateway.url, [{ query: ONE }, { query: TWO }], { authorization: warm });
  });

  it('entries that fit are answered by the fast lane, each with the budget it left', async () => {
    const served = gateway.lanes?.served.fast ?? 0;
    const answer = await post(gateway.url, [{ query: ONE }, { query: TWO }], { authorization: BOB });
    expect(gateway.lanes?.served.fast).toBe(served + 1);
    const entries = answer.body as [Answer, Answer];
    expect(
      entries.map((entry) => [entry.extensions?.cost?.estimated, entry.extensions?.cost?.actual]),
    ).toEqual([
      [2, 2],
      [4, 4],
    ]);
    // 10 less 2 and 4, whichever was charged first.
    expect(answer.headers.get('x-cost-budget-available')).toBe('4');
  });

  it('an entry that does not fit is refused, the other runs, and nothing is charged twice', async () => {
    const answer = await post(gateway.url, [{ query: THREE }, { query: ONE }, { query: TWO }], {
      authorization: CAROL,
    });
    const entries = answer.body as Answer[];
    const codes = entries.map((entry) => entry.errors?.[0]?.extensions?.code);
    // 9 + 2 + 4 against 10: the entries charged first fit, the rest do not.
    expect(codes.filter((code) => code === 'RATE_LIMITED').length).toBeGreaterThan(0);
    const ran = entries.filter((entry) => entry.errors === undefined);
    expect(ran.length).toBeGreaterThan(0);
    const spent = ran.reduce((sum, entry) => sum + (entry.extensions?.cost?.actual ?? 0), 0);
    expect(spent).toBeLessThanOrEqual(10);
    // What is left is what the entries that ran did not spend: each charged once, on one lane.
    const left = Math.min(
      ...entries.map((entry) => entry.extensions?.cost?.throttleStatus?.currentlyAvailable ?? 10),
    );
    expect(left).toBe(10 - spent);
  });
});

const redisAvailable = haveRedisServer('cost-budget.test');

describe.skipIf(!redisAvailable)('RATE_LIMIT_STORE=redis: one budget across instances', () => {
  let redis: RunningRedis;
  const shared: SharedRedis[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const connection of shared) await connection.close();
    await redis.stop();
  });

  it('what one instance charged, the other sees; with Redis gone each holds it alone', async () => {
    const budgetOn = () => {
      const connection = createSharedRedis(redis.url);
      shared.push(connection);
      const budget = createCostBudget({
        perMinute: 10,
        store: 'redis',
        redis: connection,
        callerKey: createCallerKey('budget-secret'),
      });
      return { connection, budget };
    };
    const a = budgetOn();
    const b = budgetOn();
    for (let i = 0; i < 250 && (a.connection.state !== 'up' || b.connection.state !== 'up'); i++)
      await sleep(20);
    const first = await a.budget.charge(undefined, BOB, 9);
    expect(first.limited).toBe(false);
    const second = await b.budget.charge(undefined, BOB, 9);
    expect(second).toMatchObject({ limited: true, reason: 'budget', status: { currentlyAvailable: 1 } });
    if (!first.limited) expect(first.settle(2).currentlyAvailable).toBe(8);
    // The refund went to Redis: the other instance can charge 8 now.
    await sleep(50);
    expect((await b.budget.charge(undefined, BOB, 8)).limited).toBe(false);

    await redis.kill();
    const alone = await a.budget.charge(undefined, CAROL, 10);
    expect(alone.limited).toBe(false);
    expect((await a.budget.charge(undefined, CAROL, 10)).limited).toBe(true);
    expect(a.budget.stats.errors).toBeGreaterThan(0);
  });
});
