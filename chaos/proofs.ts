import { sample } from './metrics-text.ts';
import { breakersClosed, percentile } from './probes.ts';
import type { checkStored, Tally } from './traffic.ts';

// What the chaos runs prove, from what they saw and counted: the single run's proofs first, then
// what the cluster run proves beyond them.

/** One claim a run proves (or fails to). */
export interface Proof {
  name: string;
  passed: boolean;
  detail: string;
}

/** Limits for "memory came back": garbage not yet collected and V8's sizing leave room, a leak does not. */
// V8 collects the old generation only once it has grown well past what the last full collection
// kept, so without a full collection "after" may hold up to about twice the live heap.
const HEAP_SLACK = { factor: 2, bytes: 32 * 2 ** 20 };
const RSS_SLACK = { factor: 2, bytes: 128 * 2 ** 20 };

export interface Memory {
  heap: number;
  rss: number;
}

/** "memory came back": the lowest after the run against the lowest before it. */
export function memoryProof(before: Memory, after: Memory): Proof {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  const heapLimit = before.heap * HEAP_SLACK.factor + HEAP_SLACK.bytes;
  const rssLimit = before.rss * RSS_SLACK.factor + RSS_SLACK.bytes;
  return {
    name: 'memory came back',
    passed: after.heap <= heapLimit && after.rss <= rssLimit,
    detail: `heap used ${mb(before.heap)} → ${mb(after.heap)} (limit ${mb(heapLimit)}), RSS ${mb(before.rss)} → ${mb(after.rss)} (limit ${mb(rssLimit)})`,
  };
}

const examples = (list: string[]) => (list.length === 0 ? '' : `; e.g. ${list.slice(0, 3).join('; ')}`);

/**
 * What every run proves of its answers and the store: each answer data or a documented code (the
 * cluster's also says what nginx answered itself: `balancer`), each acknowledged create stored once,
 * and no answer with another key's data.
 */
export function answerProofs(
  { outcomes, failures, checked }: Tally,
  { stored, acknowledged, unacknowledgedStored }: Awaited<ReturnType<typeof checkStored>>,
  balancer?: { passed: boolean; detail: string },
): Proof[] {
  const answered = [...outcomes.values()].reduce((a, b) => a + b, 0);
  return [
    {
      name: 'every answer: data or a documented code',
      passed: failures.undocumented.length === 0 && answered > 0 && (balancer?.passed ?? true),
      detail: `${answered} answers, ${failures.undocumented.length} without${examples(failures.undocumented)}${balancer ? `; ${balancer.detail}` : ''}`,
    },
    {
      name: 'acknowledged creates stored exactly once',
      passed: failures.lost.length === 0 && acknowledged > 0,
      detail: `${acknowledged} acknowledged, ${stored.size} pets read back, ${unacknowledgedStored} stored without an acknowledgement${examples(failures.lost)}`,
    },
    {
      name: "no answer carried another key's data",
      passed: failures.leaks.length === 0,
      detail: `${checked.own} createPet/pet(id) answers carried their own key's names; ${checked.intruder} answers to unknown keys, ${failures.leaks.length} with data${examples(failures.leaks)}`,
    },
  ];
}

/**
 * Requests per key per minute: far above what the traffic sends per key, reached on purpose by
 * one key after Redis is back, to see the limit shared again.
 */
export const RATE_LIMIT = 400;
/**
 * Requests that started this soon after Redis stopped may pay the breaker's one 250 ms timeout
 * (those in flight when it froze): the latency proof is about what follows.
 */
export const BREAKER_TRIP_MS = 500;

/** When the faults were, for the proofs: [from, to) windows in ms since the epoch. */
export interface Faults {
  healthy: Array<[number, number]>;
  redisDown: Array<[number, number]>;
  gatewayKills: number[];
}

/** The answers, the stored creates, the keys' data and the breakers, as the single run proves them. */
export function clusterProofs(
  tally: Tally,
  stored: Awaited<ReturnType<typeof checkStored>>,
  faults: Faults,
  breakerTexts: string[],
  instances: number,
): Proof[] {
  const transitions = (state: string) =>
    breakerTexts.reduce(
      (sum, text) =>
        sum + (sample(text, 'pet_gateway_upstream_breaker_transitions_total', `state="${state}"`) ?? 0),
      0,
    );
  const closed = breakersClosed(breakerTexts);
  // nginx's 502 is allowed only for requests sent before the kill or within a second of it (on
  // connections nginx still held to the dead instance, until it marks it failed): never later.
  const lateBalancerErrors = tally.balancerErrors.filter(
    (at) => !faults.gatewayKills.some((killedAt) => at <= killedAt + 1_000),
  );
  return [
    ...answerProofs(tally, stored, {
      passed: lateBalancerErrors.length === 0,
      detail: `${tally.balancerErrors.length} were nginx's 502 for requests sent to the SIGKILLed instance up to its kill (+1 s), ${lateBalancerErrors.length} later`,
    }),
    {
      name: 'breakers opened and closed',
      passed: transitions('open') > 0 && transitions('closed') > 0 && closed,
      detail: `over ${instances} instances: open ${transitions('open')}, half-open ${transitions('half-open')}, closed ${transitions('closed')}; now ${closed ? 'all closed' : 'not all closed'}`,
    },
  ];
}

/** The shared rate limit once Redis is back, and latency while it was down. */
export function redisProofs(
  limitStatuses: Map<number, number>,
  instances: number,
  latencies: Tally['latencies'],
  faults: Faults,
): Proof[] {
  const within = (windows: Array<[number, number]>) =>
    latencies.filter(({ at }) => windows.some(([from, to]) => at >= from && at < to)).map(({ ms }) => ms);
  const healthyP99 = percentile(within(faults.healthy), 0.99);
  const downP99 = percentile(within(faults.redisDown), 0.99);
  return [
    {
      name: 'shared rate limit holds after Redis returns',
      passed: limitStatuses.get(200) === RATE_LIMIT && limitStatuses.get(429) === 1,
      detail: `one key, ${RATE_LIMIT + 1} requests over ${instances} instances (limit ${RATE_LIMIT}/min): ${[...limitStatuses].map(([status, n]) => `${n}× ${status}`).join(', ')}`,
    },
    {
      name: 'p99 while Redis is down ≤ 2× healthy',
      passed: healthyP99 > 0 && downP99 > 0 && downP99 <= 2 * healthyP99,
      detail: `p99 ${downP99.toFixed(1)} ms over ${within(faults.redisDown).length} requests with Redis frozen or dead (from ${BREAKER_TRIP_MS} ms after it stopped: the breaker's one timeout), against ${healthyP99.toFixed(1)} ms over ${within(faults.healthy).length} healthy ones`,
    },
  ];
}
