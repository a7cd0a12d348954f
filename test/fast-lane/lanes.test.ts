// @tier integration

import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { Metrics } from '../../src/observability/metrics.ts';
import { CASES } from './cases.ts';
import { type Answer, AUTH, countedSeries, send, sendAlike, useThreeSides, warmUp } from './sides.ts';

// One behaviour, three paths. The same requests go to a gateway with FAST_LANE off (Yoga answers
// everything), to one whose fast lane runs compiled execution only (PLANS=off), and to one with the
// defaults (a compiled plan of upstream calls where the operation allows one), after the document
// has been warmed so the fast lane holds it prepared. Status, body bytes, every header but Date, the
// upstream calls, the operation log line and the metrics must be the same. Successes must be served
// by the fast lane (by a plan, where one was compiled); failures are executed by it and answered by
// Yoga from that result, never executed twice.

// The cases are in ./cases-*.ts, by what they hold, and run here in that order, on the same three
// sides, so the metric series compared at the end count every one of them.

const three = useThreeSides();

describe('the fast lane answers exactly as Yoga does', () => {
  it.each(CASES)('$name', async (c) => {
    const { upstream, yoga, compiled, fast } = three;
    const sides = [yoga, compiled, fast];
    await warmUp(sides, c);
    const lanes = fast.gateway.lanes;
    if (!lanes) throw new Error('the fast lane is off');
    const servedBefore = { ...lanes.served };
    const compiledBefore = { ...(compiled.gateway.lanes?.served ?? lanes.served) };
    const [viaYoga] = (await sendAlike(upstream, sides, c)) as [Answer];
    // An answer in parts is compared as bytes above; its first error is read from JSON answers.
    if (String(viaYoga.headers['content-type']).includes('json')) {
      const answered = JSON.parse(viaYoga.text) as
        | { errors?: Array<{ extensions?: { code?: string } }> }
        | Array<{ errors?: Array<{ extensions?: { code?: string } }> }>;
      const first = Array.isArray(answered) ? answered.find((entry) => entry.errors) : answered;
      expect(first?.errors?.[0]?.extensions?.code).toBe(c.code);
    } else expect(c.code).toBeUndefined();
    // Successes are the fast lane's own (a plan's, where one was compiled); everything else is
    // answered by Yoga.
    const success = c.code === undefined && !c.yogaOnly;
    expect(lanes.served.fast - servedBefore.fast).toBe(success ? 1 : 0);
    expect(lanes.served.planned - servedBefore.planned).toBe(success && !c.unplanned ? 1 : 0);
    expect((compiled.gateway.lanes?.served.fast ?? 0) - compiledBefore.fast).toBe(success ? 1 : 0);
    expect(compiled.gateway.lanes?.served.planned).toBe(0);
  });

  it('counted every operation in the same metric series on both sides', async () => {
    const { yoga, compiled, fast } = three;
    const counted = await countedSeries(fast.metrics);
    expect(
      counted.series.find((metric) => metric.name === 'pet_gateway_operations_total')?.values.length,
    ).toBeGreaterThan(3);
    expect(counted).toEqual(await countedSeries(yoga.metrics));
    expect(await countedSeries(compiled.metrics)).toEqual(await countedSeries(yoga.metrics));
    const planned = async (metrics: Metrics) =>
      (await metrics.registry.getSingleMetric('pet_gateway_planned_requests_total')?.get())?.values[0]?.value;
    expect(await planned(fast.metrics)).toBe(fast.gateway.lanes?.served.planned);
    expect(await planned(fast.metrics)).toBeGreaterThan(10);
    expect(await planned(compiled.metrics)).toBe(0);
    // The corpus's fixed pets queries took the one-call path (src/fast-lane/one-call.ts), its
    // failures included, and were held to Yoga's bytes above.
    expect(fast.gateway.lanes?.served.oneCall).toBeGreaterThan(5);
    expect(compiled.gateway.lanes?.served.oneCall).toBe(0);
  });

  it('leaves an answer Yoga sends in parts (SSE, multipart/mixed) to Yoga: the fast lane writes JSON', async () => {
    const { yoga, fast } = three;
    // Clients of graphql-sse ask for every operation as SSE, a plain query included.
    for (const accept of ['text/event-stream', 'multipart/mixed']) {
      const body = { query: '{ pets(limit: 3) { id name } }' };
      let last: Answer[] = [];
      for (let run = 0; run < 4; run++) {
        last = [await send(yoga, body, { accept }), await send(fast, body, { accept })];
      }
      const [viaYoga, viaFast] = last as [Answer, Answer];
      expect(String(viaYoga.headers['content-type']), accept).toMatch(new RegExp(`^${accept}`));
      expect(viaFast, accept).toEqual(viaYoga);
    }
  });

  it('sends a new request id, as Yoga does, when the caller sends none', async () => {
    const { fast } = three;
    const body = { query: '{ pets(limit: 7) { id } }' };
    for (let run = 0; run < 3; run++) await send(fast, body);
    const before = fast.gateway.lanes?.served.fast ?? 0;
    const answer = await request(fast.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify(body),
    });
    await answer.body.text();
    expect(fast.gateway.lanes?.served.fast).toBe(before + 1);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
