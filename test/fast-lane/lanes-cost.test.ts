// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { type Case, type Side, sendAlike, side, startLanesUpstream, warmUp } from './sides.ts';

// COST_REPORT=on, differentially: what an answer says it cost (extensions.cost, the x-cost-*
// headers), the operation's log line and the cost histogram are the same whichever lane answers,
// and the fast lane still answers what it answers with the report off.

const REPORT = { costReport: true } as const;

// `byShape`: only a side with plans finds a new text by its shape; the others have Yoga answer it.
const CASES: Array<Case & { estimated: number; actual: number; byShape?: boolean }> = [
  {
    name: 'one list (one call)',
    body: { query: '{ pets(limit: 5) { id name } }' },
    estimated: 15,
    actual: 9,
  },
  {
    name: 'three aliased lists (a plan)',
    body: { query: '{ a: pets(limit: 2) { id } b: pets(limit: 4, status: SOLD) { name } c: pets { id } }' },
    estimated: 52,
    actual: 12,
  },
  {
    name: 'a list sized by a variable',
    body: {
      query: 'query L($limit: Int) { pets(limit: $limit) { id name status } }',
      variables: { limit: 7 },
    },
    estimated: 28,
    actual: 12,
  },
  {
    name: 'a new text of a planned shape',
    warm: { query: '{ x: pets(limit: 9) { name } }' },
    body: { query: '{ y: pets(limit: 9) { name } }' },
    estimated: 18,
    actual: 6,
    byShape: true,
  },
  {
    name: 'a deprecated field',
    body: { query: '{ pet(id: "2") { id name } }' },
    estimated: 3,
    actual: 3,
  },
];

describe('COST_REPORT=on: both lanes report the same cost', () => {
  let upstream: FakeUpstream;
  let sides: Side[];

  beforeAll(async () => {
    upstream = await startLanesUpstream();
    sides = [
      await side(upstream, false, undefined, undefined, true, REPORT),
      await side(upstream, true, undefined, undefined, false, REPORT),
      await side(upstream, true, undefined, undefined, true, REPORT),
    ];
  });

  afterAll(async () => {
    for (const { gateway } of sides) await gateway.close();
    await upstream.close();
  });

  const servedFast = () => sides.map(({ gateway }) => gateway.lanes?.served.fast ?? 0);

  it.each(CASES)('$name: estimated $estimated, actual $actual', async (c) => {
    await warmUp(sides, c);
    const before = servedFast();
    const [viaYoga] = await sendAlike(upstream, sides, c);
    expect(servedFast()).toEqual([before[0], (before[1] ?? 0) + (c.byShape ? 0 : 1), (before[2] ?? 0) + 1]);
    const answer = JSON.parse(viaYoga?.text ?? '') as { extensions?: { cost?: unknown } };
    expect(answer.extensions?.cost).toEqual({ estimated: c.estimated, actual: c.actual });
    expect(viaYoga?.headers['x-cost-estimated']).toBe(String(c.estimated));
    expect(viaYoga?.headers['x-cost-actual']).toBe(String(c.actual));
    const line = JSON.parse(sides[0]?.logs.find((text) => text.includes('"operation"')) ?? '{}');
    expect(line.cost).toEqual({ estimated: c.estimated, actual: c.actual });
  });

  it('a batch of three: each entry its own cost, the headers the sum', async () => {
    const c: Case = {
      name: 'batch',
      body: [
        { query: '{ pets(limit: 1) { id } }' },
        { query: '{ pets(limit: 2) { name } }' },
        { query: '{ pets(limit: 30) { id status } }' },
      ],
    };
    await warmUp(sides, c);
    const before = servedFast();
    const [viaYoga] = await sendAlike(upstream, sides, c);
    expect(servedFast()).toEqual([before[0], (before[1] ?? 0) + 1, (before[2] ?? 0) + 1]);
    const entries = JSON.parse(viaYoga?.text ?? '') as Array<{ extensions?: { cost?: unknown } }>;
    expect(entries.map((entry) => entry.extensions?.cost)).toEqual([
      { estimated: 2, actual: 2 },
      { estimated: 4, actual: 4 },
      { estimated: 90, actual: 9 },
    ]);
    expect(viaYoga?.headers['x-cost-estimated']).toBe('96');
    expect(viaYoga?.headers['x-cost-actual']).toBe('15');
  });

  it('the cost histogram counts the same on every side', async () => {
    const histogram = async (target: Side) =>
      (await target.metrics.registry.getMetricsAsJSON()).find(
        (metric) => metric.name === 'pet_gateway_operation_cost',
      )?.values;
    const fromYoga = await histogram(sides[0] as Side);
    expect(
      fromYoga?.some(
        (value) => (value as { metricName?: string }).metricName === 'pet_gateway_operation_cost_count',
      ),
    ).toBe(true);
    for (const target of sides.slice(1)) expect(await histogram(target)).toEqual(fromYoga);
  });
});
