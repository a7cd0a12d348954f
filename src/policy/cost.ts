import type { ExecutionResult } from 'graphql';

/**
 * What an answer says about its cost when COST_REPORT=on, the same on every lane and protocol:
 * `extensions.cost` holds `estimated` (priced before anything ran) and `actual` (priced from what
 * came back), a one-body answer repeats them in these headers (a batch's: the sum of its
 * entries'), and the operation's log line and /metrics carry them.
 */
export interface CostReport {
  readonly estimated: number;
  /** Absent in an answer's first part, priced before the rest was sent. */
  readonly actual?: number;
  /** With COST_BUDGET_PER_MINUTE: the caller's budget once this operation was settled. */
  readonly throttleStatus?: ThrottleStatus;
}

/** A caller's budget in points, in Shopify's words: what it holds, has left, and gets back a second. */
export interface ThrottleStatus {
  readonly maximumAvailable: number;
  readonly currentlyAvailable: number;
  readonly restoreRate: number;
}

export const COST_HEADERS = {
  estimated: 'x-cost-estimated',
  actual: 'x-cost-actual',
  budgetMaximum: 'x-cost-budget-maximum',
  budgetAvailable: 'x-cost-budget-available',
} as const;

/** The result with its cost in `extensions.cost`, after any extension it already has. */
export function withCost<Result extends ExecutionResult>(result: Result, cost: CostReport): Result {
  return { ...result, extensions: { ...result.extensions, cost } };
}

/** What a request's answer cost in all: its operations' costs added up (one, or a batch's). */
export function addCost(total: CostReport | undefined, cost: CostReport): CostReport {
  if (total === undefined) return cost;
  const estimated = total.estimated + cost.estimated;
  const actual =
    total.actual === undefined || cost.actual === undefined ? undefined : total.actual + cost.actual;
  // The budget as the request leaves it: the lowest any of its operations saw.
  const throttleStatus =
    (total.throttleStatus?.currentlyAvailable ?? Number.POSITIVE_INFINITY) <=
    (cost.throttleStatus?.currentlyAvailable ?? Number.POSITIVE_INFINITY)
      ? total.throttleStatus
      : cost.throttleStatus;
  return {
    estimated,
    ...(actual === undefined ? {} : { actual }),
    ...(throttleStatus ? { throttleStatus } : {}),
  };
}

/** The headers that repeat a cost, as name and value in turn. */
export function costHeaders(cost: CostReport): string[] {
  const headers = [COST_HEADERS.estimated, String(cost.estimated)];
  if (cost.actual !== undefined) headers.push(COST_HEADERS.actual, String(cost.actual));
  const status = cost.throttleStatus;
  if (status) {
    headers.push(COST_HEADERS.budgetMaximum, String(status.maximumAvailable));
    headers.push(COST_HEADERS.budgetAvailable, String(status.currentlyAvailable));
  }
  return headers;
}

/**
 * An operation's cost once it ran: its estimate, its actual (the estimate when it has none), and
 * what the caller's budget holds once the charge is settled to the actual (a budget's charge).
 */
export function settledCost(
  estimated: number,
  actual: number | undefined,
  charge: { settle(actual: number | undefined): ThrottleStatus } | undefined,
): CostReport {
  const spent = actual ?? estimated;
  return charge
    ? { estimated, actual: spent, throttleStatus: charge.settle(spent) }
    : { estimated, actual: spent };
}
