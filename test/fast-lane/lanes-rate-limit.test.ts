// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimit } from '../../src/policy/rate-limit.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { type Answer, type Side, send, side, startLanesUpstream } from './sides.ts';

// A rate limit, differentially: a Yoga side and a fast-lane side, each with a limit of its own,
// must spend it alike and refuse alike, whichever lane answered or handed a request over.

let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startLanesUpstream();
});

afterAll(async () => {
  await upstream.close();
});

/** A Yoga side and a fast-lane side, each with a limit of `perMinute`, for the describe that asks. */
function limitedSides(perMinute: number) {
  const sides = {} as { yoga: Side; fast: Side };
  const limits = [createRateLimit({ perMinute }), createRateLimit({ perMinute })];

  beforeAll(async () => {
    sides.yoga = await side(upstream, false, limits[0]);
    sides.fast = await side(upstream, true, limits[1]);
  });

  afterAll(async () => {
    await sides.yoga.gateway.close();
    await sides.fast.gateway.close();
    for (const limit of limits) await limit.close();
  });

  return { sides, limits };
}

/** An answer with its seconds to wait written as N: each side's minute opened on its own clock. */
const same = (answer: Answer) =>
  JSON.parse(JSON.stringify(answer).replaceAll(/(retry-after":"|retryAfter\\":|retry in )\d+/g, '$1N'));

describe('a rate limit holds in both lanes, one point per request', () => {
  const { sides, limits } = limitedSides(5);

  it('answers the same 429, and counts a request the fast lane hands to Yoga once', async () => {
    const found = { query: 'query Limited($id: ID!) { pet(id: $id) { id name } }', variables: { id: '2' } };
    const missing = { ...found, variables: { id: '404' } };
    // The fourth is executed by the fast lane and answered by Yoga (it has an error): were it
    // counted by both, the fifth would be refused.
    const statuses: number[] = [];
    for (const body of [found, found, found, missing, found, found]) {
      const viaYoga = await send(sides.yoga, body);
      const viaFast = await send(sides.fast, body);
      // Both minutes opened within a millisecond of each other: Retry-After may round apart.
      const seconds = (answer: Answer) => Number(answer.headers['retry-after'] ?? 0);
      expect(Math.abs(seconds(viaFast) - seconds(viaYoga))).toBeLessThanOrEqual(1);
      expect(same(viaFast)).toEqual(same(viaYoga));
      statuses.push(viaYoga.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(limits.map((limit) => limit.stats.limited)).toEqual([1, 1]);
    expect(sides.fast.gateway.lanes?.served.fast).toBeGreaterThan(0);
  });
});

describe('a rate limit holds in both lanes for a batch, one point per entry', () => {
  const { sides, limits } = limitedSides(7);

  it('refuses the entries past the limit alike, counting each entry once though the fast lane hands the batch over', async () => {
    const batch = [
      { query: '{ pets(limit: 6) { id } }' },
      { query: 'query Other { pets(limit: 7) { name } }' },
    ];
    const codes: string[][] = [];
    const before = sides.fast.gateway.lanes?.served.fast ?? 0;
    // 2 + 2 + 2 points, then the fourth batch's first entry takes the seventh and its second is refused.
    for (let round = 0; round < 4; round++) {
      const viaYoga = await send(sides.yoga, batch);
      const viaFast = await send(sides.fast, batch);
      expect(same(viaFast)).toEqual(same(viaYoga));
      codes.push(
        (JSON.parse(viaYoga.text) as Array<{ errors?: Array<{ extensions: { code: string } }> }>).map(
          (entry) => entry.errors?.[0]?.extensions.code ?? 'ok',
        ),
      );
    }
    expect(codes).toEqual([
      ['ok', 'ok'],
      ['ok', 'ok'],
      ['ok', 'ok'],
      ['ok', 'RATE_LIMITED'],
    ]);
    expect(limits.map((limit) => limit.stats.limited)).toEqual([1, 1]);
    // Yoga ran the first two (an operation is compiled, then prepared, on its second run); the
    // third was the fast lane's own; the fourth it handed over with its decisions.
    expect((sides.fast.gateway.lanes?.served.fast ?? 0) - before).toBe(1);
  });
});
