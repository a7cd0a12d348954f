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
}

export const COST_HEADERS = { estimated: 'x-cost-estimated', actual: 'x-cost-actual' } as const;

/** The result with its cost in `extensions.cost`, after any extension it already has. */
export function withCost<Result extends ExecutionResult>(result: Result, cost: CostReport): Result {
  return { ...result, extensions: { ...result.extensions, cost } };
}

/** What a request's answer cost in all: its operations' costs added up (one, or a batch's). */
export function addCost(total: CostReport | undefined, cost: CostReport): CostReport {
  if (total === undefined) return cost;
  const actual =
    total.actual === undefined || cost.actual === undefined ? undefined : total.actual + cost.actual;
  return actual === undefined
    ? { estimated: total.estimated + cost.estimated }
    : { estimated: total.estimated + cost.estimated, actual };
}

/** The headers that repeat a cost, as name and value in turn. */
export function costHeaders(cost: CostReport): string[] {
  return cost.actual === undefined
    ? [COST_HEADERS.estimated, String(cost.estimated)]
    : [COST_HEADERS.estimated, String(cost.estimated), COST_HEADERS.actual, String(cost.actual)];
}
