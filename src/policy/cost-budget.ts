import type { IncomingMessage } from 'node:http';
import { createCostBuckets } from '../stores/cost-buckets.ts';
import type { SharedRedis } from '../stores/redis.ts';
import { bearerAuthorization } from '../upstream/authorization.ts';
import { type CallerKey, createCallerKey } from '../upstream/caller-key.ts';
import type { ThrottleStatus } from './cost.ts';

/**
 * What charging an operation decided: charged (then `settle` once its actual cost is known), or
 * refused, with when the caller's budget will hold the charge.
 */
export type Charge =
  | {
      readonly limited: false;
      /**
       * Gives back what the operation did not cost (its charge less `actual`, none when it is not
       * known) and says what the caller has left after it. Called once; later calls give nothing.
       */
      settle(actual: number | undefined): ThrottleStatus;
    }
  | {
      readonly limited: true;
      readonly reason: 'budget';
      readonly retryAfterSeconds: number;
      readonly status: ThrottleStatus;
    };

/** A charge the budget took: settled once the operation's actual cost is known. */
export type TakenCharge = Extract<Charge, { limited: false }>;

export interface CostBudget {
  /**
   * Charges an operation's estimated cost to its caller (the bearer key, or without one its client
   * address): at least 1, so no request is free, and at most the whole budget, so every operation
   * can run with a full one. Never rejects.
   */
  charge(
    req: IncomingMessage | undefined,
    authorization: string | null | undefined,
    estimated: number,
  ): Promise<Charge>;
  /** Takes decided in memory because Redis failed (and of those, refused at once by its breaker). */
  readonly stats: { errors: number; bypassed?: number };
  close(): Promise<void>;
}

export interface CostBudgetOptions {
  /** Points each caller has, restored continuously over a minute (COST_BUDGET_PER_MINUTE). */
  perMinute: number;
  /** Where the buckets live: this process, or Redis shared by every instance. @default 'memory' */
  store?: 'memory' | 'redis';
  redis?: SharedRedis | URL | string;
  /** Names the caller in keys; the same secret on every instance. @default this process's own */
  callerKey?: CallerKey;
  /** In a worker (WORKERS > 1): buckets kept in the primary, shared by every worker. @default false */
  acrossWorkers?: boolean;
  /** The client address of a request, for callers without a key. */
  clientAddress?: (req: IncomingMessage) => string;
}

/**
 * A budget in points per caller (docs/cost.md): each operation is charged its estimate before it
 * runs and refunded down to its actual cost after; past the budget it is refused RATE_LIMITED with
 * when to retry. Callers without a key are charged by client address, in this process's memory
 * only (an address is not a secret to name in Redis), as the rate limit counts them.
 */
export function createCostBudget(options: CostBudgetOptions): CostBudget {
  const { perMinute } = options;
  const stats = { errors: 0, bypassed: 0 };
  const buckets = createCostBuckets({
    perMinute,
    ...(options.store ? { store: options.store } : {}),
    ...(options.redis ? { redis: options.redis } : {}),
    acrossWorkers: options.acrossWorkers ?? false,
    stats,
  });
  const keyless = createCostBuckets({ perMinute, acrossWorkers: options.acrossWorkers ?? false, stats });
  const callerKey = options.callerKey ?? createCallerKey();
  const addressOf =
    options.clientAddress ?? ((req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown');
  const restoreRate = Math.round((perMinute / 60) * 100) / 100;
  const statusOf = (left: number): ThrottleStatus => ({
    maximumAvailable: perMinute,
    currentlyAvailable: Math.max(0, Math.floor(left)),
    restoreRate,
  });
  return {
    async charge(req, authorization, estimated) {
      const bearer = bearerAuthorization(authorization).authorization;
      const [store, key] =
        bearer === undefined
          ? [keyless, `address:${req ? addressOf(req) : 'unknown'}`]
          : [buckets, callerKey(bearer)];
      const charged = Math.min(perMinute, Math.max(1, Math.ceil(estimated)));
      const take = await store.take(key, charged);
      if (!take.taken) {
        return {
          limited: true,
          reason: 'budget',
          retryAfterSeconds: Math.max(1, Math.ceil(take.waitMs / 1000)),
          status: statusOf(take.left),
        };
      }
      let settled = false;
      return {
        limited: false,
        settle(actual) {
          const refund = settled || actual === undefined ? 0 : Math.max(0, charged - Math.max(1, actual));
          settled = true;
          if (refund > 0) store.give(key, refund);
          return statusOf(Math.min(perMinute, take.left + refund));
        },
      };
    },
    stats,
    close: async () => {
      await buckets.close();
    },
  };
}
