/** The bench's figures: runs summarised, the table, the ratios' table, and the goals judged. */
import type { LoadResult } from './load.ts';
import type { TargetKind, UpstreamKind } from './workloads.ts';

/** One load run of one target (the load's own figures), with the CPU and memory of every process over it. */
export interface RunResult extends Omit<LoadResult, 'seconds' | 'generatorCpuMicros'> {
  workload: string;
  upstream: UpstreamKind;
  target: TargetKind;
  round: number;
  /** The target's process: each round's own unless --same-processes. */
  pid: number;
  /** The CPUs the target's process was allowed during the run, where /proc says. */
  cpus: string | undefined;
  rps: number;
  /** For `direct`, the upstream's. */
  cpuMicrosPerRequest: number;
  /** Undefined for `direct`: the same process. */
  upstreamCpuMicrosPerRequest: number | undefined;
  generatorCpuMicrosPerRequest: number;
  /** Share of the machine's CPU busy with processes not of this bench during the run. */
  othersCpuShare: number | undefined;
  peakRssBytes: number;
  /** Distinct bearer keys the (static) upstream saw during the run. */
  upstreamKeys: number | undefined;
}

/** One target's runs of one workload summarised. */
export type Summary = Omit<RunResult, 'round' | 'requests' | 'pid' | 'cpus'> & {
  upstreamCallsPerOp: number | undefined;
  /** What was wrong with a peer's checked answer; undefined when it was right. */
  wrongAnswer: string | undefined;
};

export type RatioMetric = 'rps' | 'cpu' | 'p99';

export interface Ratio {
  workload: string;
  /** A target, or a target in another workload's role (the cold/warm comparison). */
  numerator: string;
  denominator: string;
  metric: RatioMetric;
  /** Median of the per-round ratios. */
  median: number;
  rounds: number[];
  note?: string;
}

const MB = 1024 * 1024;

/** The batch workload and the one whose single request it is judged against. */
export const BATCH = { workload: 'batch5', single: 'list20' } as const;

/** A goal on a ratio; without `max` or `min`, reported without a goal. */
interface RatioGoal {
  workload: string;
  /** The ratio's denominator, and its numerator when not the gateway. */
  of: string;
  numerator?: string;
  metric: RatioMetric;
  max?: number;
  min?: number;
  /** The line's words before the ratio, when not `gateway <metric> `, and after it. */
  label?: string;
  after?: string;
  /** Said inside the goal's parentheses, before it. */
  why?: string;
}

/**
 * The project's goals (issue #53), judged on one run with 200 keys; then, outside this table, peak
 * RSS within the bare hop's plus 48 MB, no failures, and 5 upstream calls for dedup's 10 aliases.
 */
export const GOALS: readonly RatioGoal[] = [
  { workload: 'list20', of: 'json-hop', metric: 'cpu', max: 1.25 },
  { workload: 'list20', of: 'tailcall', metric: 'cpu' },
  { workload: 'list20', of: 'tailcall', metric: 'rps', min: 0.8 },
  { workload: 'list20-bigids', of: 'tailcall', metric: 'cpu' },
  { workload: 'list20-bigids', of: 'tailcall', metric: 'rps', min: 0.7 },
  { workload: 'list20', of: 'gateway-warn', metric: 'cpu', max: 1.05, why: 'LOG_LEVEL=warn; ' },
  { workload: 'list20', of: 'hive-mesh', metric: 'rps', min: 10 },
  { workload: 'dedup', of: 'bare-proxy', metric: 'rps', min: 0.6 },
  { workload: 'create-pet', of: 'bare-proxy', metric: 'rps', min: 0.45 },
  // A batch of five: never more than its entries sent alone.
  {
    workload: BATCH.workload,
    numerator: 'gateway batch',
    of: 'gateway single',
    metric: 'cpu',
    max: 5,
    label: 'gateway CPU per batch ',
    after: ` one ${BATCH.single}'s`,
  },
  {
    workload: 'cold',
    of: 'gateway-baseline',
    metric: 'cpu',
    max: 0.6,
    after: " the baseline's on new documents",
  },
  { workload: 'list20-steady', of: 'bare-proxy', metric: 'p99', max: 2 },
];

const RSS_EXTRA_BYTES = 48 * MB;
const DEDUP_CALLS = 5;

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The median of the values that are defined; undefined if none is. */
const definedMedian = (values: ReadonlyArray<number | undefined>) => {
  const defined = values.filter((v) => v !== undefined);
  return defined.length === 0 ? undefined : median(defined);
};

/** Medians across rounds for rates, latencies and CPU, sums for failures, the maximum for memory. */
export function summarise(
  runs: readonly RunResult[],
  callsPerOp: number | undefined,
  wrongAnswer?: string,
): Summary {
  const first = runs[0];
  if (first === undefined) throw new Error('no runs to summarise');
  const of = (value: (r: RunResult) => number) => median(runs.map(value));
  const sum = (value: (r: RunResult) => number) => runs.reduce((total, r) => total + value(r), 0);
  const keys = runs.map((r) => r.upstreamKeys).filter((k) => k !== undefined);
  return {
    workload: first.workload,
    upstream: first.upstream,
    target: first.target,
    generator: first.generator,
    rps: of((r) => r.rps),
    p50Ms: of((r) => r.p50Ms),
    p99Ms: of((r) => r.p99Ms),
    errors: sum((r) => r.errors),
    non2xx: sum((r) => r.non2xx),
    graphqlErrors: sum((r) => r.graphqlErrors),
    cpuMicrosPerRequest: of((r) => r.cpuMicrosPerRequest),
    upstreamCpuMicrosPerRequest: definedMedian(runs.map((r) => r.upstreamCpuMicrosPerRequest)),
    generatorCpuMicrosPerRequest: of((r) => r.generatorCpuMicrosPerRequest),
    othersCpuShare: definedMedian(runs.map((r) => r.othersCpuShare)),
    peakRssBytes: Math.max(...runs.map((r) => r.peakRssBytes)),
    upstreamKeys: keys.length === 0 ? undefined : Math.min(...keys),
    upstreamCallsPerOp: callsPerOp,
    wrongAnswer,
  };
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);

const table = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');

const COLUMNS: ReadonlyArray<[string, (s: Summary) => string]> = [
  ['workload', (s) => s.workload],
  ['upstream', (s) => s.upstream],
  ['target', (s) => s.target],
  ['req/s', (s) => s.rps.toFixed(0)],
  ['CPU µs/req', (s) => fixed(s.cpuMicrosPerRequest, 0)],
  ['p50 ms', (s) => fixed(s.p50Ms, 2)],
  ['p99 ms', (s) => fixed(s.p99Ms, 2)],
  ['errors', (s) => String(s.errors)],
  ['non-2xx', (s) => String(s.non2xx)],
  ['GraphQL errors', (s) => String(s.graphqlErrors)],
  ['upstream CPU µs/req', (s) => fixed(s.upstreamCpuMicrosPerRequest, 0)],
  ['peak RSS MB', (s) => (s.peakRssBytes / MB).toFixed(0)],
  ['upstream calls/op', (s) => fixed(s.upstreamCallsPerOp, 2)],
  ['generator', (s) => s.generator],
  ['generator CPU µs/req', (s) => fixed(s.generatorCpuMicrosPerRequest, 0)],
  ['upstream keys', (s) => fixed(s.upstreamKeys, 0)],
  ['answer', (s) => (s.wrongAnswer === undefined ? 'ok' : 'WRONG')],
];

/** The results as a Markdown table, so a run can be pasted into the docs as it is. */
export function formatTable(summaries: readonly Summary[]): string {
  const rows = summaries.map((s) => COLUMNS.map(([, cell]) => cell(s)));
  const wrong = summaries.flatMap((s) =>
    s.wrongAnswer === undefined ? [] : [`- ${s.workload} ${s.target} answered wrongly: ${s.wrongAnswer}`],
  );
  return [
    table(
      COLUMNS.map(([name]) => name),
      rows,
    ),
    ...(wrong.length > 0 ? ['', ...wrong] : []),
  ].join('\n');
}

/** `median (lowest–highest round)`, or the one value of a single round. */
function cell(r: Ratio | undefined): string {
  if (r === undefined) return '–';
  if (r.rounds.length === 1) return r.median.toFixed(2);
  return `${r.median.toFixed(2)} (${Math.min(...r.rounds).toFixed(2)}–${Math.max(...r.rounds).toFixed(2)})`;
}

/** One row per compared pair: its req/s, CPU per request and steady-rate p99 ratios side by side. */
export function formatRatios(ratios: readonly Ratio[]): string {
  const pairs = new Map<string, Partial<Record<RatioMetric, Ratio>>>();
  for (const r of ratios) {
    const key = `${r.workload}\u0000${r.numerator} / ${r.denominator}`;
    pairs.set(key, { ...pairs.get(key), [r.metric]: r });
  }
  const rows = [...pairs].map(([key, by]) => [
    ...key.split('\u0000'),
    cell(by.rps),
    cell(by.cpu),
    cell(by.p99),
    by.rps?.note ?? by.cpu?.note ?? '',
  ]);
  return table(['workload', 'ratio', 'req/s', 'CPU µs/req', 'p99 latency', 'note'], rows);
}

const verdict = (met: boolean) => (met ? 'PASS' : 'FAIL');
const times = (value: number) => `${value.toFixed(2)}×`;
const METRIC_NAME: Record<RatioMetric, string> = { cpu: 'CPU/req', rps: 'req/s', p99: 'p99' };

/** One goal's line, flagged where the target compared against answered wrongly (not like for like). */
function goalLine(goal: RatioGoal, value: number, summaries: readonly Summary[]): string {
  const { workload, of, max, min, why = '' } = goal;
  const judged =
    max !== undefined
      ? `(${why}goal ≤ ${times(max)}) ${verdict(value <= max)}`
      : min !== undefined
        ? `(${why}goal ≥ ${times(min)}) ${verdict(value >= min)}`
        : '(reported, no goal)';
  const wrong = summaries.some(
    (s) => s.workload === workload && s.target === of && s.wrongAnswer !== undefined,
  );
  const label = goal.label ?? `gateway ${METRIC_NAME[goal.metric]} `;
  return `- ${workload}: ${label}${times(value)}${goal.after ?? ` ${of}'s`} ${judged}${wrong ? ` (${of} answered wrongly: see the table)` : ''}`;
}

/** Where the gateway stands against its goals, one line each with PASS or FAIL; goals not run are left out. */
export function formatGoals(ratios: readonly Ratio[], summaries: readonly Summary[]): string[] {
  const lines = GOALS.flatMap((goal) => {
    const measured = ratios.find(
      (r) =>
        r.workload === goal.workload &&
        r.numerator === (goal.numerator ?? 'gateway') &&
        r.denominator === goal.of &&
        r.metric === goal.metric,
    );
    return measured === undefined ? [] : [goalLine(goal, measured.median, summaries)];
  });
  const summary = (workload: string, target: TargetKind) =>
    summaries.find((s) => s.workload === workload && s.target === target);
  const gatewayRss = summary('list20', 'gateway')?.peakRssBytes;
  const bareRss = summary('list20', 'bare-proxy')?.peakRssBytes;
  if (gatewayRss !== undefined && bareRss !== undefined) {
    const limit = bareRss + RSS_EXTRA_BYTES;
    const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;
    lines.push(
      `- list20: gateway peak RSS ${mb(gatewayRss)} (goal ≤ bare-proxy's ${mb(bareRss)} + ` +
        `${mb(RSS_EXTRA_BYTES)} = ${mb(limit)}) ${verdict(gatewayRss <= limit)}`,
    );
  }
  const gateway = summaries.filter((s) => s.target === 'gateway');
  if (gateway.length > 0) {
    const failures = gateway.reduce((sum, s) => sum + s.errors + s.non2xx + s.graphqlErrors, 0);
    lines.push(
      `- every workload: gateway errors + non-2xx + GraphQL errors ${failures} (goal 0) ${verdict(failures === 0)}`,
    );
  }
  const calls = summary('dedup', 'gateway')?.upstreamCallsPerOp;
  if (calls !== undefined) {
    lines.push(
      `- dedup: gateway upstream calls/op ${calls.toFixed(2)} (goal ${DEDUP_CALLS}) ${verdict(calls === DEDUP_CALLS)}`,
    );
  }
  return lines;
}
