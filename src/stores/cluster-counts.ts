import cluster, { type Worker } from 'node:cluster';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { MemoryBuckets } from './memory-buckets.ts';

// With WORKERS > 1 the primary hands each connection to the next worker, so counts kept in each
// worker would let a key through once per worker: RATE_LIMIT_PER_MINUTE=5 would be 10 with two. The
// workers' in-memory counts therefore live in the primary, asked over the cluster's IPC channel
// (one round trip on the machine per counted request), so the limit a setting names is the limit a
// key meets, whatever WORKERS is.

const ASK = 'pet-gateway:count';
const ANSWER = 'pet-gateway:count-answer';
/**
 * A primary that does not answer in this long (busy, or gone) is not waited for: that decision is
 * taken with the worker's own count instead, as a Redis that does not answer is.
 */
const ANSWER_TIMEOUT_MS = 250;

/** A per-key counter of points: what the rate limit and the cost budget need of rate-limiter-flexible's. */
export interface PointCounter {
  /**
   * Takes `points` of `key`'s window (or bucket): resolves with the points left, rejects with a
   * RateLimiterRes when there were not enough.
   */
  consume(key: string, points?: number): Promise<{ readonly remainingPoints: number }>;
  /** Gives `points` back to `key`'s window. */
  reward(key: string, points?: number): Promise<unknown>;
}

export interface CounterLimits {
  /** Names the counter in the primary: one per kind of count. */
  name: string;
  points: number;
  /** Seconds of the window, or for a bucket, to restore all its points. */
  duration: number;
  keyPrefix?: string;
  /**
   * `window`: rate-limiter-flexible's fixed window. `bucket`: a token bucket restored continuously
   * (memory-buckets.ts). @default 'window'
   */
  kind?: 'window' | 'bucket';
}

interface Ask extends CounterLimits {
  type: typeof ASK;
  id: number;
  op: 'consume' | 'reward';
  key: string;
  amount: number;
}
interface Answer {
  type: typeof ANSWER;
  id: number;
  /** Taken: the points left. */
  remaining?: number;
  refused?: { remainingPoints: number; msBeforeNext: number; consumedPoints: number };
}

/**
 * A counter in this process, or, in a worker of a cluster whose primary serves them
 * (`serveWorkerCounts`), the one counter all the workers share.
 */
export function createPointCounter(limits: CounterLimits, acrossWorkers: boolean): PointCounter {
  const own = counterOf(limits);
  return acrossWorkers && cluster.isWorker ? askingPrimary(limits, own) : own;
}

function counterOf(limits: CounterLimits): PointCounter {
  if (limits.kind === 'bucket') return new MemoryBuckets(limits);
  return new RateLimiterMemory({
    points: limits.points,
    duration: limits.duration,
    ...(limits.keyPrefix ? { keyPrefix: limits.keyPrefix } : {}),
  });
}

/** Worker side: every count is the primary's; its own `fallback` only while the primary does not answer. */
function askingPrimary(limits: CounterLimits, fallback: PointCounter): PointCounter {
  let next = 0;
  const pending = new Map<number, (answer: Answer | undefined) => void>();
  process.on('message', (message: Answer) => {
    if (message?.type !== ANSWER) return;
    pending.get(message.id)?.(message);
  });
  const ask = (op: Ask['op'], key: string, amount: number) =>
    new Promise<Answer | undefined>((resolve) => {
      const id = next++;
      const timer = setTimeout(() => settle(undefined), ANSWER_TIMEOUT_MS);
      const settle = (answer: Answer | undefined) => {
        clearTimeout(timer);
        pending.delete(id);
        resolve(answer);
      };
      pending.set(id, settle);
      const sent = process.send?.({ type: ASK, id, op, key, amount, ...limits } satisfies Ask);
      if (!sent) settle(undefined);
    });
  return {
    async consume(key, points = 1) {
      const answer = await ask('consume', key, points);
      if (answer === undefined) return fallback.consume(key, points);
      const { refused } = answer;
      if (refused)
        throw new RateLimiterRes(
          refused.remainingPoints,
          refused.msBeforeNext,
          refused.consumedPoints,
          false,
        );
      return { remainingPoints: answer.remaining ?? 0 };
    },
    async reward(key, points = 1) {
      if ((await ask('reward', key, points)) === undefined) return fallback.reward(key, points);
      return undefined;
    },
  };
}

/** Primary side: keeps the counts every worker asks about (WORKERS > 1), one counter per name. */
export function serveWorkerCounts(): void {
  const counters = new Map<string, PointCounter>();
  const counterFor = (ask: Ask) => {
    let counter = counters.get(ask.name);
    if (!counter) {
      counter = counterOf(ask);
      counters.set(ask.name, counter);
    }
    return counter;
  };
  cluster.on('message', (worker: Worker, message: Ask) => {
    if (message?.type !== ASK) return;
    const reply = (answer: Omit<Answer, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, ...answer } satisfies Answer);
    };
    const counter = counterFor(message);
    const done =
      message.op === 'reward'
        ? counter.reward(message.key, message.amount)
        : counter.consume(message.key, message.amount);
    done.then(
      (taken) => reply({ remaining: (taken as { remainingPoints?: number }).remainingPoints ?? 0 }),
      (error: unknown) => {
        if (!(error instanceof RateLimiterRes)) return reply({});
        reply({
          refused: {
            remainingPoints: error.remainingPoints,
            msBeforeNext: error.msBeforeNext,
            consumedPoints: error.consumedPoints,
          },
        });
      },
    );
  });
}
