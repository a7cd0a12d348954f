// @tier integration

import { describe, expect, it, vi } from 'vitest';
import { cutShortCases } from './cases-cut-short.ts';
import {
  countedSeries,
  hangUpAlike,
  holdLists,
  type Side,
  sendAlike,
  type ThreeSides,
  TIMEOUT_MS,
  useThreeSides,
  warmUp,
} from './sides.ts';

// A request cut short, on every path a query can take (cases-cut-short.ts): its client hangs up
// while the upstream is slow, or the upstream is slower than the deadline. The three sides of
// lanes.test.ts (Yoga alone, the fast lane with PLANS=off, the defaults) must give the same log
// lines, the same upstream calls (each given up) and the same /metrics series, the HTTP requests
// counted by status among them; after a deadline, the same answer byte for byte.

const three = useThreeSides();

/** What the defaults' fast lane counted while `send` ran. */
async function servedBy(fast: Side, send: () => Promise<void>) {
  const lanes = fast.gateway.lanes;
  if (!lanes) throw new Error('the fast lane is off');
  const before = { ...lanes.served };
  await send();
  return { yoga: lanes.served.yoga - before.yoga, oneCall: lanes.served.oneCall - before.oneCall };
}

async function expectSameMetrics({ yoga, compiled, fast }: ThreeSides): Promise<void> {
  const viaYoga = await countedSeries(yoga.metrics);
  expect(await countedSeries(compiled.metrics)).toEqual(viaYoga);
  expect(await countedSeries(fast.metrics)).toEqual(viaYoga);
}

describe.each(cutShortCases)('$name', (c) => {
  it('a client gone while the upstream is slow: 499 client_gone alike', async () => {
    const { upstream, yoga, compiled, fast } = three;
    const sides = [yoga, compiled, fast];
    await warmUp(sides, c);
    const served = await servedBy(fast, () => hangUpAlike(upstream, sides, c, c.calls));
    // The path the case names is the one the fast lane took.
    expect(served).toEqual({ yoga: c.yogaOnly ? 1 : 0, oneCall: c.oneCall ? 1 : 0 });
    await expectSameMetrics(three);
  });

  it('an upstream slower than the deadline: the same answer, line and series', async () => {
    const { upstream, yoga, compiled, fast } = three;
    const sides = [yoga, compiled, fast];
    await warmUp(sides, c);
    const held: Array<ReturnType<typeof holdLists>> = [];
    const cut = { ...c, setup: () => void held.push(holdLists(upstream)), code: 'UPSTREAM_TIMEOUT' };
    let answers: Awaited<ReturnType<typeof sendAlike>> = [];
    // Every failure is answered by Yoga, from the fast lane's result where it ran the request.
    const served = await servedBy(fast, async () => {
      answers = await sendAlike(upstream, sides, cut);
    });
    expect(served).toEqual({ yoga: 1, oneCall: c.oneCall ? 1 : 0 });
    // Each side gave its calls up at the deadline (the fake sees their connections close).
    for (const calls of held) expect(calls).toHaveLength(c.calls);
    const givenUp = () => held.flat().every((call) => call.abortedAt !== undefined);
    await vi.waitFor(() => expect(givenUp()).toBe(true), { timeout: TIMEOUT_MS * 5, interval: 5 });
    const answered = JSON.parse(answers[0]?.text ?? '') as unknown;
    for (const entry of [answered].flat() as Array<{ errors?: Array<{ extensions?: { code?: string } }> }>) {
      expect(entry.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TIMEOUT');
    }
    await expectSameMetrics(three);
  });
});
