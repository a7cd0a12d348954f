/**
 * `npm run bench`: the gateway (fast lane on and off) against hand-written Node hops (a bare proxy
 * and a JSON-rewriting hop), Tailcall (the fastest peer, a Rust binary), Hive Gateway + GraphQL Mesh
 * (The Guild's REST-to-GraphQL stack, the goal's 10× reference) and the upstream itself, on
 * the static upstream (the hop is the bottleneck) and on the reference service, each request
 * carrying one of --keys bearer keys in turn. Every target runs in its own process; wrk (or,
 * without it, autocannon in this process) drives them, target by target in alternating rounds.
 * `npm run bench -- --help` lists the options.
 */
import { writeFileSync } from 'node:fs';
import { exitOnSignals, killSpawned } from '../test/support/process.ts';
import { headlineChart } from './chart.ts';
import { describeRun, printHeader } from './header.ts';
import { agent, CALLS_CHECK_OPS, measure, sendOnce, upstreamCallsPerOp, warmUp } from './measure.ts';
import { measuringOrder } from './order.ts';
import { pinSelf } from './pinning.ts';
import { summariseProfiles } from './profile.ts';
import {
  BATCH,
  formatGoals,
  formatRatios,
  formatTable,
  median,
  type Ratio,
  type RunResult,
  ratio,
  type Summary,
  summarise,
} from './report.ts';
import { chooseWrk, DEFAULT_KEYS, parseSettings, type Settings, USAGE, UsageError } from './settings.ts';
import {
  processFor,
  profileDir,
  restartHops,
  type Stack,
  startStack,
  stopStack,
  targetsOf,
} from './stack.ts';
import {
  type HopKind,
  petIdsOf,
  type RequestSpec,
  type TargetKind,
  type UpstreamKind,
  type Workload,
} from './workloads.ts';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const settings = parseSettings(argv);
  const wrk = chooseWrk(settings.generator);
  const started = new Date();
  const meta = describeRun(argv, settings, wrk, started);
  // Before any process starts: every one but the targets inherits the load's CPUs.
  if (settings.pin) pinSelf(settings.pin);
  printHeader(meta, settings);
  const { runs, summaries, ratios } = await runWorkloads(settings, wrk);
  ratios.push(...crossWorkloadRatios(runs));
  printReport(runs, summaries, ratios, settings);
  console.log('');
  console.log(`took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
  if (settings.chart !== undefined) {
    writeFileSync(
      settings.chart,
      headlineChart(summaries, { caption: `${meta.command}, ${meta.date.slice(0, 16)}Z` }),
    );
    console.log(`\nwrote ${settings.chart}`);
  }
  if (settings.json !== undefined) {
    writeFileSync(
      settings.json,
      `${JSON.stringify({ meta, settings: { ...settings, keys: settings.keys.length, workloads: settings.workloads.map((w) => w.name) }, summaries, ratios, runs }, null, 2)}\n`,
    );
    console.log(`\nwrote ${settings.json}`);
  }
}

/** Every workload in turn: every run, with the summaries and ratios made of them. */
async function runWorkloads(
  settings: Settings,
  wrk: string | undefined,
): Promise<{ runs: RunResult[]; summaries: Summary[]; ratios: Ratio[] }> {
  // One upstream kind's processes at a time: started before its first workload, stopped after its
  // last, so idle processes neither share the machine nor hold memory during other workloads.
  const stacks = new Map<UpstreamKind, Stack>();
  const runs: RunResult[] = [];
  const summaries: Summary[] = [];
  const ratios: Ratio[] = [];
  try {
    for (const [index, workload] of settings.workloads.entries()) {
      let stack = stacks.get(workload.upstream);
      if (stack === undefined) {
        stack = await startStack(workload.upstream, settings.workloads, settings);
        stacks.set(workload.upstream, stack);
      }
      await runWorkload(stack, workload, settings, wrk, runs, summaries, ratios);
      if (!settings.workloads.slice(index + 1).some((w) => w.upstream === workload.upstream)) {
        stacks.delete(workload.upstream);
        await stopStack(stack);
      }
    }
  } finally {
    await Promise.all([...stacks.values()].map(stopStack));
    await agent.close();
  }
  return { runs, summaries, ratios };
}

/** The table, what its columns mean, the ratios, the goals and (--profile) the gateways' profiles. */
function printReport(runs: RunResult[], summaries: Summary[], ratios: Ratio[], settings: Settings): void {
  console.log(formatTable(summaries));
  console.log(`
req/s, CPU, p50, p99: median of rounds; errors: summed; CPU µs/req: user + system time of the
target's process tree per request, from /proc (direct: the upstream's); peak RSS: the target
process, highest sample (tailcall: the binary's kernel high-water mark, not its idle Node wrapper's);
upstream calls/op: exact, counted on the static upstream over ${CALLS_CHECK_OPS} sequential
operations; generator CPU µs/req: what the load generator itself used, per request;
upstream keys: distinct bearer keys the static upstream received during a run (fewest of the rounds);
answer: the answer checked before the load: ok, or WRONG (a peer's, measured but flagged; see above).`);
  const others = runs.flatMap((r) => (r.othersCpuShare === undefined ? [] : [r.othersCpuShare]));
  if (others.length > 0) {
    const percent = (share: number) => `${(100 * share).toFixed(0)}%`;
    console.log(
      `Other processes on the machine used ${percent(median(others))} of its CPU during the median run, ` +
        `${percent(Math.max(...others))} at most: the higher, the less the figures can be trusted.`,
    );
  }
  console.log('');
  console.log('ratios: median of per-round ratios (lowest–highest round); p99 only at a steady rate:');
  console.log(formatRatios(ratios));
  const goals = formatGoals(ratios, summaries);
  if (goals.length > 0) {
    console.log('');
    console.log(
      `goals (issue #53: medians of this run's rounds, on the static upstream; set for ${DEFAULT_KEYS} keys` +
        (settings.keys.length === DEFAULT_KEYS ? '' : `, this run used ${settings.keys.length}`) +
        '):',
    );
    for (const goal of goals) console.log(goal);
  }

  if (settings.profile) {
    console.log('');
    console.log(summariseProfiles(profileDir));
  }
}

/** Checks, counts, warms up and measures one workload on every target, then adds its summaries and ratios. */
async function runWorkload(
  stack: Stack,
  workload: Workload,
  settings: Settings,
  wrk: string | undefined,
  runs: RunResult[],
  summaries: Summary[],
  ratios: Ratio[],
): Promise<void> {
  const listed = Object.keys(targetsOf(workload, settings)) as TargetKind[];
  const { callsPerOp, wrongAnswers } = await checkAndWarmUp(stack, workload, settings, wrk);
  for (let round = 1; round <= settings.rounds; round++) {
    if (round > 1 && settings.freshProcesses) {
      const hops = listed.filter((t): t is HopKind => t !== 'direct');
      await restartHops(stack, hops, settings);
      for (const hop of hops) await warmUp(stack, workload, hop, settings, wrk);
    }
    const order = measuringOrder(listed, round);
    for (const target of order) {
      const run = await measure(stack, workload, target, round, settings, wrk);
      runs.push(run);
      const others =
        run.othersCpuShare === undefined ? '' : `, others ${(100 * run.othersCpuShare).toFixed(0)}% busy`;
      process.stderr.write(
        `  ${workload.name} round ${round} ${target} (${run.generator}): ${run.rps.toFixed(0)} req/s, ` +
          `${run.cpuMicrosPerRequest.toFixed(0)} µs CPU/req, p99 ${run.p99Ms.toFixed(2)} ms${others}\n`,
      );
    }
  }
  for (const target of listed) {
    summaries.push(
      summarise(
        runs.filter((r) => r.workload === workload.name && r.target === target),
        callsPerOp.get(target),
        wrongAnswers.get(target),
      ),
    );
  }
  addRatios(workload, settings, runs, wrongAnswers, ratios);
}

/**
 * Before the rounds, target by target: checks its answer (a peer's wrong one is kept, see PEERS in
 * measure.ts), counts its upstream calls per operation (static upstreams only) and warms it up.
 */
async function checkAndWarmUp(
  stack: Stack,
  workload: Workload,
  settings: Settings,
  wrk: string | undefined,
): Promise<{ callsPerOp: Map<TargetKind, number>; wrongAnswers: Map<TargetKind, string> }> {
  const specs = targetsOf(workload, settings);
  const callsPerOp = new Map<TargetKind, number>();
  const wrongAnswers = new Map<TargetKind, string>();
  for (const target of Object.keys(specs) as TargetKind[]) {
    const spec = specs[target] as RequestSpec;
    const url = processFor(stack, target).url + spec.path;
    const problem = await sendOnce(url, target, spec, settings);
    if (problem !== undefined) wrongAnswers.set(target, problem);
    if (petIdsOf(workload.upstream) !== undefined)
      callsPerOp.set(target, await upstreamCallsPerOp(stack, url, target, spec, settings));
    await warmUp(stack, workload, target, settings, wrk);
  }
  return { callsPerOp, wrongAnswers };
}

/** The workload's ratios between its targets' rounds (p99 only at a steady rate), added to `ratios`. */
function addRatios(
  workload: Workload,
  settings: Settings,
  runs: readonly RunResult[],
  wrongAnswers: ReadonlyMap<TargetKind, string>,
  ratios: Ratio[],
): void {
  const steady = workload.rate !== undefined;
  const add = (
    numerator: TargetKind,
    denominator: TargetKind,
    metrics: Array<'rps' | 'cpu' | 'p99'>,
    note?: string,
  ) => {
    for (const metric of metrics) {
      if (metric === 'p99' && !steady) continue;
      const r = ratio(
        runs,
        metric,
        { workload: workload.name, target: numerator },
        { workload: workload.name, target: denominator },
        note,
      );
      if (r !== undefined) ratios.push(r);
    }
  };
  const wrong = (target: TargetKind) => {
    const problem = wrongAnswers.get(target);
    return problem === undefined ? undefined : `${target} answers wrongly: ${problem}`;
  };
  // The gateway against the floor (bare hop), the floor for rewriting a body (JSON hop), the
  // fastest peer and The Guild's stack, side by side; then each of the others against the bare hop.
  add('gateway', 'bare-proxy', ['rps', 'cpu', 'p99'], workload.baselineNote);
  add('gateway', 'json-hop', ['rps', 'cpu', 'p99']);
  add('gateway', 'tailcall', ['rps', 'cpu', 'p99'], wrong('tailcall'));
  add('gateway', 'hive-mesh', ['rps', 'cpu'], wrong('hive-mesh'));
  for (const hop of ['gateway-yoga', 'json-hop', 'tailcall', 'hive-mesh'] as const) {
    add(hop, 'bare-proxy', ['rps', 'cpu', 'p99'], wrong(hop) ?? workload.baselineNote);
  }
  add('gateway', 'direct', ['rps', 'p99']);
  add('gateway', 'gateway-yoga', ['rps', 'cpu', 'p99'], 'fast lane on / off');
  add('gateway', 'gateway-warn', ['rps', 'cpu', 'p99'], 'LOG_LEVEL info (the default) / warn');
  add(
    'gateway-workers',
    'tailcall',
    ['rps', 'cpu'],
    settings.pin
      ? `WORKERS=2 against Tailcall, both on CPU ${settings.pin.targets}`
      : 'WORKERS=2 (both cores) against Tailcall on the same cores',
  );
  add(
    'gateway',
    'gateway-baseline',
    ['rps', 'cpu', 'p99'],
    `this checkout against --baseline ${settings.baseline}`,
  );
}

/**
 * Ratios across workloads on the same gateway, round by round: a batch of five list20 against one
 * list20 (CPU per HTTP request), and a cold document against the same query warm (what parse and
 * validate cost per request).
 */
function crossWorkloadRatios(runs: readonly RunResult[]): Ratio[] {
  const { workload, single } = BATCH;
  const batch = ratio(
    runs,
    'cpu',
    { workload, target: 'gateway', label: 'gateway batch' },
    { workload: single, target: 'gateway', label: 'gateway single' },
    `one ${single} on the same gateway in the same round`,
  );
  const cold = (['gateway', 'gateway-yoga'] as const).map((target) =>
    ratio(
      runs,
      'rps',
      { workload: 'cold', target, label: `${target} cold` },
      { workload: 'list20', target, label: `${target} warm` },
      'warm: list20 on the same gateway in the same round, measured earlier',
    ),
  );
  return [...cold, batch].filter((r) => r !== undefined);
}

exitOnSignals();

try {
  await main();
} catch (error) {
  killSpawned();
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`bench: ${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    console.error('bench: failed:', error);
    process.exitCode = 1;
  }
}
