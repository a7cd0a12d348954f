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

/**
 * The project's goals (issue #53, after #43 showed Tailcall on a core of its own at Node's bare-hop
 * price), judged on one run of `npm run bench` with 200 keys: the gateway against the JSON hop (the
 * floor for a Node gateway that rewrites a body) with Tailcall reported beside it, a batch against
 * its entries sent alone, new documents against the --baseline checkout, Hive Gateway + Mesh (the
 * product goal: an order of magnitude over The Guild's REST-to-GraphQL stack), and the bare hop
 * where the work has no peer.
 */
export const GOALS = {
  /** At most this multiple of the JSON hop's CPU per request. */
  jsonHop: [{ workload: 'list20', maxCpuRatio: 1.25 }],
  /** At least this share of Tailcall's req/s (its CPU ratio is reported beside, without a goal). */
  tailcall: [
    { workload: 'list20', minRpsRatio: 0.8 },
    { workload: 'list20-bigids', minRpsRatio: 0.7 },
  ],
  /** A batch of five list20 costs at most this multiple of one list20's CPU: never more than its entries alone. */
  batch: { workload: 'batch5', single: 'list20', maxCpuRatio: 5 },
  /** A new document every request: at most this multiple of the --baseline checkout's CPU per request. */
  cold: { workload: 'cold', maxCpuRatioToBaseline: 0.6 },
  /** The default log level costs at most this multiple of LOG_LEVEL=warn's CPU per request. */
  logLevel: { workload: 'list20', maxCpuRatio: 1.05 },
  /** At least this multiple of Hive Gateway + Mesh's req/s. */
  hiveMesh: { workload: 'list20', minRpsRatio: 10 },
  /** At least this share of the bare proxy's req/s. */
  bareProxyRps: [
    { workload: 'dedup', minRpsRatio: 0.6 },
    { workload: 'create-pet', minRpsRatio: 0.45 },
  ],
  /** p99 at a steady rate: at most this multiple of the bare proxy's. */
  steadyP99: { workload: 'list20-steady', maxRatio: 2 },
  /** Peak RSS: at most the bare proxy's (same Node, same load) plus this much. */
  rss: { workload: 'list20', maxExtraBytes: 48 * MB },
  /** Upstream calls per operation of the de-dup workload (10 aliases over 5 ids). */
  dedup: { workload: 'dedup', callsPerOp: 5 },
} as const;

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

/**
 * `numerator`'s req/s, CPU per request or p99 latency over `denominator`'s, round by round (both
 * ran in the same round, minutes apart at most), and their median.
 */
export function ratio(
  runs: readonly RunResult[],
  workload: string,
  numerator: TargetKind,
  denominator: TargetKind,
  metric: RatioMetric,
  note?: string,
): Ratio | undefined {
  const value = METRIC_OF[metric];
  const rounds: number[] = [];
  for (const top of runs.filter((r) => r.workload === workload && r.target === numerator)) {
    const bottom = runs.find(
      (r) => r.workload === workload && r.target === denominator && r.round === top.round,
    );
    if (bottom === undefined || !(value(bottom) > 0) || Number.isNaN(value(top))) continue;
    rounds.push(value(top) / value(bottom));
  }
  if (rounds.length === 0) return undefined;
  return {
    workload,
    numerator,
    denominator,
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

/** The ratio of `numerator` to `denominator` in `metric` on `workload`, if both ran. */
type FindRatio = (
  workload: string,
  numerator: string,
  denominator: string,
  metric: RatioMetric,
) => Ratio | undefined;
type FindSummary = (workload: string, target: TargetKind) => Summary | undefined;

/**
 * The goals against peers (Tailcall, Hive Gateway + Mesh), each flagged where the peer's answer was
 * wrong: a ratio to a peer that does less than the gateway is not a like-for-like figure.
 */
function peerGoals(find: FindRatio, summary: FindSummary): string[] {
  const lines: string[] = [];
  const flagOf = (workload: string, peer: TargetKind) =>
    summary(workload, peer)?.wrongAnswer === undefined ? '' : ` (${peer} answered wrongly: see the table)`;
  for (const { workload, maxCpuRatio } of GOALS.jsonHop) {
    const cpu = find(workload, 'gateway', 'json-hop', 'cpu');
    if (cpu !== undefined) {
      lines.push(
        `- ${workload}: gateway CPU/req ${times(cpu.median)} json-hop's (goal ≤ ${times(maxCpuRatio)}) ` +
          verdict(cpu.median <= maxCpuRatio),
      );
    }
  }
  for (const { workload, minRpsRatio } of GOALS.tailcall) {
    const flag = flagOf(workload, 'tailcall');
    const cpu = find(workload, 'gateway', 'tailcall', 'cpu');
    if (cpu !== undefined) {
      lines.push(`- ${workload}: gateway CPU/req ${times(cpu.median)} tailcall's (reported, no goal)${flag}`);
    }
    const rps = find(workload, 'gateway', 'tailcall', 'rps');
    if (rps !== undefined) {
      lines.push(
        `- ${workload}: gateway req/s ${times(rps.median)} tailcall's (goal ≥ ${times(minRpsRatio)}) ` +
          `${verdict(rps.median >= minRpsRatio)}${flag}`,
      );
    }
  }
  const warn = find(GOALS.logLevel.workload, 'gateway', 'gateway-warn', 'cpu');
  if (warn !== undefined) {
    const { workload, maxCpuRatio } = GOALS.logLevel;
    lines.push(
      `- ${workload}: gateway CPU/req ${times(warn.median)} gateway-warn's (LOG_LEVEL=warn; goal ≤ ${times(maxCpuRatio)}) ` +
        verdict(warn.median <= maxCpuRatio),
    );
  }
  const { workload, minRpsRatio } = GOALS.hiveMesh;
  const mesh = find(workload, 'gateway', 'hive-mesh', 'rps');
  if (mesh !== undefined) {
    lines.push(
      `- ${workload}: gateway req/s ${times(mesh.median)} hive-mesh's (goal ≥ ${times(minRpsRatio)}) ` +
        `${verdict(mesh.median >= minRpsRatio)}${flagOf(workload, 'hive-mesh')}`,
    );
  }
  return lines;
}

/**
 * Where the gateway stands against GOALS, one line per goal: what was measured, the goal, PASS or
 * FAIL. A goal whose workloads did not run is left out.
 */
export function formatGoals(ratios: readonly Ratio[], summaries: readonly Summary[]): string[] {
  const find: FindRatio = (workload, numerator, denominator, metric) =>
    ratios.find(
      (r) =>
        r.workload === workload &&
        r.numerator === numerator &&
        r.denominator === denominator &&
        r.metric === metric,
    );
  const summary: FindSummary = (workload, target) =>
    summaries.find((s) => s.workload === workload && s.target === target);
  const lines = peerGoals(find, summary);
  for (const { workload, minRpsRatio } of GOALS.bareProxyRps) {
    const rps = find(workload, 'gateway', 'bare-proxy', 'rps');
    if (rps === undefined) continue;
    lines.push(
      `- ${workload}: gateway req/s ${times(rps.median)} bare-proxy's (goal ≥ ${times(minRpsRatio)}) ` +
        verdict(rps.median >= minRpsRatio),
    );
  }
  const batch = find(GOALS.batch.workload, 'gateway batch', 'gateway single', 'cpu');
  if (batch !== undefined) {
    lines.push(
      `- ${GOALS.batch.workload}: gateway CPU per batch ${times(batch.median)} one ${GOALS.batch.single}'s ` +
        `(goal ≤ ${times(GOALS.batch.maxCpuRatio)}) ${verdict(batch.median <= GOALS.batch.maxCpuRatio)}`,
    );
  }
  const cold = find(GOALS.cold.workload, 'gateway', 'gateway-baseline', 'cpu');
  if (cold !== undefined) {
    lines.push(
      `- cold: gateway CPU/req ${times(cold.median)} the baseline's on new documents ` +
        `(goal ≤ ${times(GOALS.cold.maxCpuRatioToBaseline)}) ${verdict(cold.median <= GOALS.cold.maxCpuRatioToBaseline)}`,
    );
  }
  const p99 = find(GOALS.steadyP99.workload, 'gateway', 'bare-proxy', 'p99');
  if (p99 !== undefined) {
    const { workload, maxRatio } = GOALS.steadyP99;
    lines.push(
      `- ${workload}: gateway p99 ${times(p99.median)} bare-proxy's (goal ≤ ${times(maxRatio)}) ` +
        verdict(p99.median <= maxRatio),
    );
  }
  const gatewayRss = summary(GOALS.rss.workload, 'gateway')?.peakRssBytes;
  const bareRss = summary(GOALS.rss.workload, 'bare-proxy')?.peakRssBytes;
  if (gatewayRss !== undefined && bareRss !== undefined) {
    const limit = bareRss + GOALS.rss.maxExtraBytes;
    const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;
    lines.push(
      `- ${GOALS.rss.workload}: gateway peak RSS ${mb(gatewayRss)} (goal ≤ bare-proxy's ${mb(bareRss)} + ` +
        `${mb(GOALS.rss.maxExtraBytes)} = ${mb(limit)}) ${verdict(gatewayRss <= limit)}`,
    );
  }
  const gateway = summaries.filter((s) => s.target === 'gateway');
  if (gateway.length > 0) {
    const failures = gateway.reduce((sum, s) => sum + s.errors + s.non2xx + s.graphqlErrors, 0);
    lines.push(
      `- every workload: gateway errors + non-2xx + GraphQL errors ${failures} (goal 0) ${verdict(failures === 0)}`,
    );
  }
  const calls = summary(GOALS.dedup.workload, 'gateway')?.upstreamCallsPerOp;
  if (calls !== undefined) {
    lines.push(
      `- ${GOALS.dedup.workload}: gateway upstream calls/op ${calls.toFixed(2)} (goal ${GOALS.dedup.callsPerOp}) ` +
        verdict(calls === GOALS.dedup.callsPerOp),
    );
  }
  return lines;
}
