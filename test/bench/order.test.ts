// @tier unit

import { describe, expect, it } from 'vitest';
import { measuringOrder } from '../../bench/order.ts';
import type { TargetKind } from '../../bench/workloads.ts';

const LIST20: TargetKind[] = [
  'gateway',
  'gateway-yoga',
  'bare-proxy',
  'json-hop',
  'tailcall',
  'gateway-warn',
  'hive-mesh',
  'gateway-workers',
  'direct',
  'gateway-baseline',
];

const distance = (order: TargetKind[], a: TargetKind, b: TargetKind) =>
  Math.abs(order.indexOf(a) - order.indexOf(b));

describe('the order of a round', () => {
  it('measures every target once, the gateway between the JSON hop and Tailcall in every round', () => {
    for (let round = 1; round <= 12; round++) {
      const order = measuringOrder(LIST20, round);
      expect([...order].sort(), `round ${round}`).toEqual([...LIST20].sort());
      // The headline goals' two peers right beside it, the baseline and warn twins one further.
      expect(distance(order, 'gateway', 'json-hop'), `round ${round}`).toBe(1);
      expect(distance(order, 'gateway', 'tailcall'), `round ${round}`).toBe(1);
      expect(distance(order, 'gateway', 'gateway-baseline'), `round ${round}`).toBe(2);
      expect(distance(order, 'gateway', 'gateway-warn'), `round ${round}`).toBe(2);
      expect(distance(order, 'gateway', 'hive-mesh'), `round ${round}`).toBe(3);
    }
  });

  it('keeps Hive + Mesh two from the gateway when no baseline runs', () => {
    const order = measuringOrder(
      LIST20.filter((t) => t !== 'gateway-baseline'),
      1,
    );
    expect(distance(order, 'gateway', 'json-hop')).toBe(1);
    expect(distance(order, 'gateway', 'tailcall')).toBe(1);
    expect(distance(order, 'gateway', 'hive-mesh')).toBe(2);
  });

  it('changes which target runs first, and which runs after which, from round to round', () => {
    const firsts = new Set(Array.from({ length: 8 }, (_, i) => measuringOrder(LIST20, i + 1)[0]));
    expect(firsts.size).toBeGreaterThan(3);
    const [one, two] = [measuringOrder(LIST20, 1), measuringOrder(LIST20, 2)];
    expect(one.indexOf('tailcall') < one.indexOf('gateway')).not.toBe(
      two.indexOf('tailcall') < two.indexOf('gateway'),
    );
  });

  it('orders a workload without the goals’ targets by rotation alone', () => {
    const targets: TargetKind[] = ['gateway', 'gateway-yoga', 'bare-proxy'];
    expect(measuringOrder(targets, 1)).toEqual(['gateway', 'gateway-yoga', 'bare-proxy']);
    expect(new Set(measuringOrder(targets, 2))).toEqual(new Set(targets));
  });
});
