/**
 * `npm run bench`: the gateway (fast lane on and off) against hand-written Node hops, Tailcall, Hive
 * Gateway + Mesh and the upstream itself, each in its own process, target by target in alternating
 * rounds. `npm run bench -- --help` lists the options; docs/performance.md says what is measured.
 */
import { writeFileSync } from 'node:fs';
import { exitOnSignals, killSpawned } from '../test/support/process.ts';
import { headlineChart } from './chart.ts';
import { describeRun, printHeader } from './header.ts';
import { agent, CALLS_CHECK_OPS, measure, measureAtOnce, type Pair, prepare, warmUp } from './measure.ts';
import { measuringOrder } from './order.ts';
import { pinSelf } from './pinning.ts';
import { summariseProfiles } from './profile.ts';
import { crossWorkloadRatios, workloadRatios } from './ratios.ts';
import {
  formatGoals,
  formatRatios,
  formatTable,
  median,
  type Ratio,
  type RunResult,
  type Summary,
  summarise,
} from './report.ts';
import { DEFAULT_KEYS, parseSettings, type Settings, USAGE, UsageError } from './settings.ts';
import { profileDir, restartHops, type Stack, startStack, stopStack, targetsOf } from './stack.ts';
import type { HopKind, RequestSpec, TargetKind, UpstreamKind, Workload } from './workloads.ts';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const settings = parseSettings(argv);
  const started = new Date();
  const meta = describeRun(argv, settings, started);
  // Before any process starts: every one but the targets inherits the load's CPUs.
  if (settings.pin) pinSelf(settings.pin);
  printHeader(meta, settings);
  const runs: RunResult[] = [];
  const summaries: Summary[] = [];
  const ratios: Ratio[] = [];
  // One upstream kind's processes at a time, so idle ones neither share the machine nor hold memory.
  const stacks = new Map<UpstreamKind, Stack>();
  try {
    for (const [index, workload] of settings.workloads.entries()) {
      let stack = stacks.get(workload.upstream);
      if (stack === undefined) {
        stack = await startStack(workload.upstream, settings.workloads, settings);
        stacks.set(workload.upstream, stack);
      }
      const { runs: own, summaries: mine, atOnce } = await runWorkload(stack, workload, settings);
      runs.push(...own);
      summaries.push(...mine);
      ratios.push(...workloadRatios(workload, own, mine, settings), ...atOnce);
      if (!settings.workloads.slice(index + 1).some((w) => w.upstream === workload.upstream)) {
        stacks.delete(workload.upstream);
        await stopStack(stack);
      }
    }
  } finally {
    await Promise.all([...stacks.values()].map(stopStack));
    await agent.close();
  }
  ratios.push(...crossWorkloadRatios(runs));
  printReport(runs, summaries, ratios, settings);
  console.log(`\ntook ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
  if (settings.chart !== undefined) {
    writeFileSync(
      settings.chart,
      headlineChart(summaries, { caption: `${meta.command}, ${meta.date.slice(0, 16)}Z` }),
    );
    console.log(`\nwrote ${settings.chart}`);
  }
  if (settings.json !== undefined) {
    const { wrk: _, ...written } = settings;
    const json = { ...written, keys: settings.keys.length, workloads: settings.workloads.map((w) => w.name) };
    writeFileSync(
      settings.json,
      `${JSON.stringify({ meta, settings: json, summaries, ratios, runs }, null, 2)}\n`,
    );
    console.log(`\nwrote ${settings.json}`);
  }
}

/**
 * Prepares every target of one workload, then measures them round by round; their runs and
 * summaries, and with --baseline the two gateways measured at once in each round.
 */
async function runWorkload(
  stack: Stack,
  workload: Workload,
  settings: Settings,
): Promise<{ runs: RunResult[]; summaries: Summary[]; atOnce: Ratio[] }> {
  const specs = targetsOf(workload, settings);
  const listed = Object.keys(specs) as TargetKind[];
  const pair = (target: TargetKind): Pair => ({
    stack,
    workload,
    target,
    spec: specs[target] as RequestSpec,
  });
  const prepared = new Map<TargetKind, Awaited<ReturnType<typeof prepare>>>();
  for (const target of listed) prepared.set(target, await prepare(pair(target), settings));
  const runs: RunResult[] = [];
  const together = listed.includes('gateway') && listed.includes('gateway-baseline');
  const atOnce: number[] = [];
  for (let round = 1; round <= settings.rounds; round++) {
    if (round > 1 && settings.freshProcesses) {
      const hops = listed.filter((t): t is HopKind => t !== 'direct');
      await restartHops(stack, hops, settings);
      for (const hop of hops) await warmUp(pair(hop), settings);
    }
    for (const target of measuringOrder(listed, round)) {
      const run = await measure(pair(target), round, settings);
      runs.push(run);
      const others =
        run.othersCpuShare === undefined ? '' : `, others ${(100 * run.othersCpuShare).toFixed(0)}% busy`;
      process.stderr.write(
        `  ${workload.name} round ${round} ${target} (${run.generator}): ${run.rps.toFixed(0)} req/s, ` +
          `${run.cpuMicrosPerRequest.toFixed(0)} µs CPU/req, p99 ${run.p99Ms.toFixed(2)} ms${others}\n`,
      );
    }
    if (together) {
      const [mine, theirs] = await measureAtOnce([pair('gateway'), pair('gateway-baseline')], settings);
      if (theirs > 0) atOnce.push(mine / theirs);
      process.stderr.write(
        `  ${workload.name} round ${round} gateway and gateway-baseline at once: ` +
          `${mine.toFixed(0)} and ${theirs.toFixed(0)} µs CPU/req\n`,
      );
    }
  }
  const summaries = listed.map((target) => {
    const { callsPerOp, wrongAnswer } = prepared.get(target) ?? {};
    return summarise(
      runs.filter((r) => r.target === target),
      callsPerOp,
      wrongAnswer,
    );
  });
  const paired: Ratio[] =
    atOnce.length === 0
      ? []
      : [
          {
            workload: workload.name,
            numerator: 'gateway',
            denominator: 'gateway-baseline at once',
            metric: 'cpu',
            median: median(atOnce),
            rounds: atOnce,
            note: 'both under load at the same time on the same CPUs: the steadier "is it slower?"',
          },
        ];
  return { runs, summaries, atOnce: paired };
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
  console.log('\nratios: median of per-round ratios (lowest–highest round); p99 only at a steady rate:');
  console.log(formatRatios(ratios));
  const goals = formatGoals(ratios, summaries);
  if (goals.length > 0) {
    const used = settings.keys.length === DEFAULT_KEYS ? '' : `, this run used ${settings.keys.length}`;
    console.log(
      `\ngoals (issue #53: medians of this run's rounds, on the static upstream; set for ${DEFAULT_KEYS} keys${used}):`,
    );
    for (const goal of goals) console.log(goal);
  }
  if (settings.profile) console.log(`\n${summariseProfiles(profileDir)}`);
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
