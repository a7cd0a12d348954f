/** Ratios between targets' runs, round by round: what the ratios table and the goals read. */
import { BATCH, median, type Ratio, type RatioMetric, type RunResult, type Summary } from './report.ts';
import type { Settings } from './settings.ts';
import type { TargetKind, Workload } from './workloads.ts';

const METRIC_OF: Record<RatioMetric, (r: RunResult) => number> = {
  rps: (r) => r.rps,
  cpu: (r) => r.cpuMicrosPerRequest,
  p99: (r) => r.p99Ms,
};

/** One side of a ratio: a target's runs of a workload, named `label` (default: the target). */
interface Side {
  workload: string;
  target: TargetKind;
  label?: string;
}

/**
 * `numerator`'s metric over `denominator`'s, round by round (both ran in the same round, minutes
 * apart at most), and their median; filed under the numerator's workload.
 */
function ratio(
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
    if (bottom !== undefined && value(bottom) > 0 && !Number.isNaN(value(top)))
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

/**
 * One workload's ratios (p99 only at a steady rate): the gateway against the bare hop, the JSON hop,
 * Tailcall and Hive + Mesh, each other hop against the bare hop, then the gateway's twins.
 */
export function workloadRatios(
  workload: Workload,
  runs: readonly RunResult[],
  summaries: readonly Summary[],
  settings: Settings,
): Ratio[] {
  const ratios: Ratio[] = [];
  const add = (numerator: TargetKind, denominator: TargetKind, metrics: RatioMetric[], note?: string) => {
    for (const metric of metrics) {
      if (metric === 'p99' && workload.rate === undefined) continue;
      const side = (target: TargetKind) => ({ workload: workload.name, target });
      const r = ratio(runs, metric, side(numerator), side(denominator), note);
      if (r !== undefined) ratios.push(r);
    }
  };
  const wrong = (target: TargetKind) => {
    const problem = summaries.find((s) => s.target === target)?.wrongAnswer;
    return problem === undefined ? undefined : `${target} answers wrongly: ${problem}`;
  };
  const all: RatioMetric[] = ['rps', 'cpu', 'p99'];
  add('gateway', 'bare-proxy', all, workload.baselineNote);
  add('gateway', 'json-hop', all);
  add('gateway', 'tailcall', all, wrong('tailcall'));
  add('gateway', 'hive-mesh', ['rps', 'cpu'], wrong('hive-mesh'));
  for (const hop of ['gateway-yoga', 'json-hop', 'tailcall', 'hive-mesh'] as const) {
    add(hop, 'bare-proxy', all, wrong(hop) ?? workload.baselineNote);
  }
  add('gateway', 'direct', ['rps', 'p99']);
  add('gateway', 'gateway-yoga', all, 'fast lane on / off');
  add('gateway', 'gateway-warn', all, 'LOG_LEVEL info (the default) / warn');
  add(
    'gateway-workers',
    'tailcall',
    ['rps', 'cpu'],
    settings.pin
      ? `WORKERS=2 against Tailcall, both on CPU ${settings.pin.targets}`
      : 'WORKERS=2 (both cores) against Tailcall on the same cores',
  );
  add('gateway', 'gateway-baseline', all, `this checkout against --baseline ${settings.baseline}`);
  return ratios;
}

/**
 * Ratios across workloads on the same gateway, round by round: a cold document against the same
 * query warm (what parse and validate cost), and a batch of five against one list20 (CPU per request).
 */
export function crossWorkloadRatios(runs: readonly RunResult[]): Ratio[] {
  const { workload, single } = BATCH;
  const cold = (['gateway', 'gateway-yoga'] as const).map((target) =>
    ratio(
      runs,
      'rps',
      { workload: 'cold', target, label: `${target} cold` },
      { workload: 'list20', target, label: `${target} warm` },
      'warm: list20 on the same gateway in the same round, measured earlier',
    ),
  );
  const batch = ratio(
    runs,
    'cpu',
    { workload, target: 'gateway', label: 'gateway batch' },
    { workload: single, target: 'gateway', label: 'gateway single' },
    `one ${single} on the same gateway in the same round`,
  );
  return [...cold, batch].filter((r) => r !== undefined);
}
