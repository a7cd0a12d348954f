import type { GeneratorName } from './load.ts';
import type { TargetKind, UpstreamKind } from './workloads.ts';

/** One load run of one target, with the target's own CPU and memory over that run. */
export interface RunResult {
  workload: string;
  upstream: UpstreamKind;
  target: TargetKind;
  round: number;
  /** The target's process (its primary, for the workers target): each round's own unless --same-processes. */
  pid: number;
  /** The CPUs the target's process was allowed during the run (see --pin), where /proc says. */
  cpus: string | undefined;
  generator: GeneratorName;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors and timeouts. */
  errors: number;
  non2xx: number;
  /** 2xx answers whose body carried a GraphQL `errors` entry. */
  graphqlErrors: number;
  /** CPU time of the target's process tree per completed request (for `direct`, the upstream's). */
  cpuMicrosPerRequest: number;
  /** CPU time of the upstream process per completed request (not shown for `direct`: same process). */
  upstreamCpuMicrosPerRequest: number | undefined;
  /** CPU time of the load generator per completed request. */
  generatorCpuMicrosPerRequest: number;
  /** Share of the machine's CPU (all cores) busy with processes not of this bench during the run. */
  othersCpuShare: number | undefined;
  peakRssBytes: number;
  /** Distinct bearer keys the upstream saw during the run (static upstreams count them). */
  upstreamKeys: number | undefined;
}

/** The medians of one target's runs of one workload (a run without its round and request count). */
export type Summary = Omit<RunResult, 'round' | 'requests' | 'pid' | 'cpus'> & {
  /** Upstream requests per operation, counted on the static upstream with nothing else running. */
  upstreamCallsPerOp: number | undefined;
  /** What was wrong with a peer's checked answer (see PEERS in measure.ts); undefined when it was right. */
  wrongAnswer: string | undefined;
};

/** What a ratio compares: throughput, CPU per request, or p99 latency at a steady rate. */
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

/** A goal on a ratio of the gateway's to another target's runs (see `ratio`). */
interface RatioGoal {
  workload: string;
  /** The ratio's denominator: a target, or a role (the batch's single list20). */
  of: string;
  metric: RatioMetric;
  /** The ratio's numerator, when it is not the gateway itself. */
  numerator?: string;
  /** At most / at least this ratio; neither: reported, no goal. */
  max?: number;
  min?: number;
  /** What the line says before the ratio, when not `gateway <metric> `; and what comes after it. */
  label?: string;
  after?: string;
  /** Said inside the goal's parentheses, before it. */
  why?: string;
}

/**
 * The project's goals (issue #53, after #43 showed Tailcall on a core of its own at Node's bare-hop
 * price), judged on one run of `npm run bench` with 200 keys: the gateway against the JSON hop (the
 * floor for a Node gateway that rewrites a body) with Tailcall reported beside it, the default log
 * level against `warn`, Hive Gateway + Mesh (the product goal: an order of magnitude over The
 * Guild's REST-to-GraphQL stack), the bare hop where the work has no peer, a batch against its
 * entries sent alone, and new documents against the --baseline checkout. Then, outside the table:
 * peak RSS within the bare hop's plus 48 MB, no failures, and 5 upstream calls for dedup's 10 aliases.
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

/** Peak RSS on list20: at most the bare proxy's (same Node, same load) plus this much. */
const RSS_EXTRA_BYTES = 48 * MB;
/** Upstream calls per operation of the de-dup workload (10 aliases over 5 ids). */
const DEDUP_CALLS = 5;

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const definedValues = (values: ReadonlyArray<number | undefined>) =>
  values.flatMap((v) => (v === undefined ? [] : [v]));

/** Medians across rounds for rates, latencies and CPU, sums for failures, the maximum for memory. */
export function summarise(
  runs: readonly RunResult[],
  callsPerOp: number | undefined,
  wrongAnswer?: string,
): Summary {
  const first = runs[0];
  if (first === undefined) throw new Error('no runs to summarise');
  const upstreamCpu = definedValues(runs.map((r) => r.upstreamCpuMicrosPerRequest));
  const others = definedValues(runs.map((r) => r.othersCpuShare));
  return {
    workload: first.workload,
    upstream: first.upstream,
    target: first.target,
    generator: first.generator,
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    graphqlErrors: runs.reduce((sum, r) => sum + r.graphqlErrors, 0),
    cpuMicrosPerRequest: median(runs.map((r) => r.cpuMicrosPerRequest)),
    upstreamCpuMicrosPerRequest: upstreamCpu.length === 0 ? undefined : median(upstreamCpu),
    generatorCpuMicrosPerRequest: median(runs.map((r) => r.generatorCpuMicrosPerRequest)),
    othersCpuShare: others.length === 0 ? undefined : median(others),
    peakRssBytes: Math.max(...runs.map((r) => r.peakRssBytes)),
    upstreamKeys: runs.every((r) => r.upstreamKeys === undefined)
      ? undefined
      : Math.min(...definedValues(runs.map((r) => r.upstreamKeys))),
    upstreamCallsPerOp: callsPerOp,
    wrongAnswer,
  };
}

const METRIC_OF: Record<RatioMetric, (r: RunResult) => number> = {
  rps: (r) => r.rps,
  cpu: (r) => r.cpuMicrosPerRequest,
  p99: (r) => r.p99Ms,
};

/** One side of a ratio: a target's runs of a workload, named `label` (default: the target). */
export interface Side {
  workload: string;
  target: TargetKind;
  label?: string;
}

/**
 * `numerator`'s req/s, CPU per request or p99 latency over `denominator`'s, round by round (both
 * ran in the same round, minutes apart at most), and their median; filed under the numerator's
 * workload.
 */
export function ratio(
  runs: readonly RunResult[],
  metric: RatioMetric,
  numerator: Side,
  denominator: Side,
  note?: string,
): Ratio | undefined {
  const value = METRIC_OF[metric];
  const of = (side: Side) => runs.filter((r) => r.workload === side.workload && r.target === side.target);
  const bottoms = of(denominator);
  const rounds: number[] = [];
  for (const top of of(numerator)) {
    const bottom = bottoms.find((r) => r.round === top.round);
    if (bottom === undefined || !(value(bottom) > 0) || Number.isNaN(value(top))) continue;
    rounds.push(value(top) / value(bottom));
  }
  if (rounds.length === 0) return undefined;
  return {
    workload: numerator.workload,
    numerator: numerator.label ?? numerator.target,
    denominator: denominator.label ?? denominator.target,
    metric,
    median: median(rounds),
    rounds,
    ...(note === undefined ? {} : { note }),
  };
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);

const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

const table = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');

/** The results as a Markdown table, so a run can be pasted into the README as it is. */
export function formatTable(summaries: readonly Summary[]): string {
  const header = [
    'workload',
    'upstream',
    'target',
    'req/s',
    'CPU µs/req',
    'p50 ms',
    'p99 ms',
    'errors',
    'non-2xx',
    'GraphQL errors',
    'upstream CPU µs/req',
    'peak RSS MB',
    'upstream calls/op',
    'generator',
    'generator CPU µs/req',
    'upstream keys',
    'answer',
  ];
  const rows = summaries.map((s) => [
    s.workload,
    s.upstream,
    s.target,
    s.rps.toFixed(0),
    fixed(s.cpuMicrosPerRequest, 0),
    fixed(s.p50Ms, 2),
    fixed(s.p99Ms, 2),
    String(s.errors),
    String(s.non2xx),
    String(s.graphqlErrors),
    fixed(s.upstreamCpuMicrosPerRequest, 0),
    (s.peakRssBytes / 1024 / 1024).toFixed(0),
    fixed(s.upstreamCallsPerOp, 2),
    s.generator,
    fixed(s.generatorCpuMicrosPerRequest, 0),
    fixed(s.upstreamKeys, 0),
    s.wrongAnswer === undefined ? 'ok' : 'WRONG',
  ]);
  const wrong = summaries.flatMap((s) =>
    s.wrongAnswer === undefined ? [] : [`- ${s.workload} ${s.target} answered wrongly: ${s.wrongAnswer}`],
  );
  return [table(header, rows), ...(wrong.length > 0 ? ['', ...wrong] : [])].join('\n');
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
    const key = `${r.workload}\u0000${r.numerator}\u0000${r.denominator}`;
    pairs.set(key, { ...pairs.get(key), [r.metric]: r });
  }
  const rows = [...pairs.entries()].map(([key, byMetric]) => {
    const [workload = '', numerator = '', denominator = ''] = key.split('\u0000');
    const note = byMetric.rps?.note ?? byMetric.cpu?.note ?? '';
    return [
      workload,
      `${numerator} / ${denominator}`,
      cell(byMetric.rps),
      cell(byMetric.cpu),
      cell(byMetric.p99),
      note,
    ];
  });
  return table(['workload', 'ratio', 'req/s', 'CPU µs/req', 'p99 latency', 'note'], rows);
}

const verdict = (met: boolean) => (met ? 'PASS' : 'FAIL');
const times = (value: number) => `${value.toFixed(2)}×`;
const METRIC_NAME: Record<RatioMetric, string> = { cpu: 'CPU/req', rps: 'req/s', p99: 'p99' };

/** One goal's line, flagged where the target compared against answered wrongly (not like for like). */
function goalLine(goal: RatioGoal, measured: Ratio, summaries: readonly Summary[]): string {
  const { workload, of, max, min } = goal;
  const value = measured.median;
  const judged =
    max !== undefined
      ? `(${goal.why ?? ''}goal ≤ ${times(max)}) ${verdict(value <= max)}`
      : min !== undefined
        ? `(${goal.why ?? ''}goal ≥ ${times(min)}) ${verdict(value >= min)}`
        : '(reported, no goal)';
  const wrong = summaries.some(
    (s) => s.workload === workload && s.target === of && s.wrongAnswer !== undefined,
  );
  const flag = wrong ? ` (${of} answered wrongly: see the table)` : '';
  const label = goal.label ?? `gateway ${METRIC_NAME[goal.metric]} `;
  return `- ${workload}: ${label}${times(value)}${goal.after ?? ` ${of}'s`} ${judged}${flag}`;
}

/**
 * Where the gateway stands against GOALS, one line per goal: what was measured, the goal, PASS or
 * FAIL. A goal whose workloads did not run is left out.
 */
export function formatGoals(ratios: readonly Ratio[], summaries: readonly Summary[]): string[] {
  const lines = GOALS.flatMap((goal) => {
    const numerator = goal.numerator ?? 'gateway';
    const measured = ratios.find(
      (r) =>
        r.workload === goal.workload &&
        r.numerator === numerator &&
        r.denominator === goal.of &&
        r.metric === goal.metric,
    );
    return measured === undefined ? [] : [goalLine(goal, measured, summaries)];
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
