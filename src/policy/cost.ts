/**
 * What an answer says about its cost when COST_REPORT=on, the same on every lane and protocol:
 * `extensions.cost` holds `estimated` (priced before anything ran) and `actual` (priced from what
 * came back), and a one-body answer repeats them in these headers.
 */
export interface CostReport {
  readonly estimated: number;
  /** Absent in an answer's first part, priced before the rest was sent. */
  readonly actual?: number;
}

export const COST_HEADERS = { estimated: 'x-cost-estimated', actual: 'x-cost-actual' } as const;
