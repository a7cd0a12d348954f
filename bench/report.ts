import type { TargetKind, UpstreamKind } from './workloads.ts';

/** One autocannon run of one target, with the target's own CPU and memory over that run. */
export interface RunResult {
  workload: string;
  upstream: UpstreamKind;
  target: TargetKind;
  round: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors and timeouts. */
  errors: number;
  non2xx: number;
  /** 2xx answers whose body carried a GraphQL `errors` entry. */
  graphqlErrors: number;
  /** CPU time of the target process per completed request (for `direct`, the upstream itself). */
  cpuMicrosPerRequest: number;
  /** CPU time of the upstream process per completed request (not shown for `direct`: same process). */
  upstreamCpuMicrosPerRequest: number | undefined;
  peakRssBytes: number;
}

/** The medians of one target's runs of one workload (a run without its round and request count). */
export type Summary = Omit<RunResult, 'round' | 'requests'> & {
  /** Upstream requests per operation, counted on the static upstream with nothing else running. */
  upstreamCallsPerOp: number | undefined;
};

export interface Ratio {
  workload: string;
  name: string;
  /** Median of the per-round ratios. */
  median: number;
  rounds: number[];
  note?: string;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Medians across rounds for rates and latencies, sums for failures, the maximum for memory. */
export function summarise(runs: readonly RunResult[], callsPerOp: number | undefined): Summary {
  const first = runs[0];
  if (first === undefined) throw new Error('no runs to summarise');
  const upstreamCpu = runs.flatMap((r) =>
    r.upstreamCpuMicrosPerRequest === undefined ? [] : [r.upstreamCpuMicrosPerRequest],
  );
  return {
    workload: first.workload,
    upstream: first.upstream,
    target: first.target,
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    graphqlErrors: runs.reduce((sum, r) => sum + r.graphqlErrors, 0),
    cpuMicrosPerRequest: median(runs.map((r) => r.cpuMicrosPerRequest)),
    upstreamCpuMicrosPerRequest: upstreamCpu.length === 0 ? undefined : median(upstreamCpu),
    peakRssBytes: Math.max(...runs.map((r) => r.peakRssBytes)),
    upstreamCallsPerOp: callsPerOp,
  };
}

/** `numerator`'s req/s (or p99 latency) over `denominator`'s, round by round, and their median. */
export function ratio(
  runs: readonly RunResult[],
  workload: string,
  numerator: TargetKind,
  denominator: TargetKind,
  note?: string,
  metric: 'rps' | 'p99' = 'rps',
): Ratio | undefined {
  const rounds: number[] = [];
  for (const top of runs.filter((r) => r.workload === workload && r.target === numerator)) {
    const bottom = runs.find(
      (r) => r.workload === workload && r.target === denominator && r.round === top.round,
    );
    if (bottom === undefined) continue;
    if (metric === 'rps' && bottom.rps > 0) rounds.push(top.rps / bottom.rps);
    if (metric === 'p99' && bottom.p99Ms > 0) rounds.push(top.p99Ms / bottom.p99Ms);
  }
  if (rounds.length === 0) return undefined;
  return {
    workload,
    name: `${numerator}/${denominator}${metric === 'p99' ? ' p99 latency' : ''}`,
    median: median(rounds),
    rounds,
    ...(note === undefined ? {} : { note }),
  };
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);

/** The results as a Markdown table, so a run can be pasted into the README as it is. */
export function formatTable(summaries: readonly Summary[]): string {
  const header = [
    'workload',
    'upstream',
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'non-2xx',
    'GraphQL errors',
    'CPU µs/req',
    'upstream CPU µs/req',
    'peak RSS MB',
    'upstream calls/op',
  ];
  const rows = summaries.map((s) => [
    s.workload,
    s.upstream,
    s.target,
    s.rps.toFixed(0),
    fixed(s.p50Ms, 1),
    fixed(s.p99Ms, 1),
    String(s.errors),
    String(s.non2xx),
    String(s.graphqlErrors),
    fixed(s.cpuMicrosPerRequest, 0),
    fixed(s.upstreamCpuMicrosPerRequest, 0),
    (s.peakRssBytes / 1024 / 1024).toFixed(0),
    fixed(s.upstreamCallsPerOp, 2),
  ]);
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function formatRatio(r: Ratio): string {
  const rounds = r.rounds.map((value) => value.toFixed(2)).join(' ');
  return `ratio ${r.workload}: ${r.name} ${r.median.toFixed(2)} [rounds: ${rounds}]${r.note ? ` (${r.note})` : ''}`;
}
