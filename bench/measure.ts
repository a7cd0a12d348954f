/**
 * Measuring one target of one workload: its answer checked and its upstream calls counted before
 * the load, then a run under load with the CPU every process used during it.
 */
import { Agent, request } from 'undici';
import { machineCpuMicros, processTreeCpuMicros } from './cpu-time.ts';
import { nextBody, runLoad } from './load.ts';
import { allowedCpus } from './pinning.ts';
import type { RunResult } from './report.ts';
import type { Settings } from './settings.ts';
import { processFor, type Stack } from './stack.ts';
import { headersOf, petIdsOf, type RequestSpec, type TargetKind, type Workload } from './workloads.ts';

/** One target of one workload, on the stack of the workload's upstream. */
export interface Pair {
  stack: Stack;
  workload: Workload;
  target: TargetKind;
  spec: RequestSpec;
}

/** Sequential operations sent to count upstream calls per operation exactly. */
export const CALLS_CHECK_OPS = 20;

export const agent = new Agent();

/** Lets the previous run's sockets close (not in a smoke run). */
const settle = (settings: Settings) =>
  new Promise((resolve) => setTimeout(resolve, settings.smoke ? 0 : 200));

// The process is looked up at each use: restartHops replaces it between rounds.
const urlOf = (pair: Pair) => processFor(pair.stack, pair.target).url + pair.spec.path;

/**
 * Targets that are not this checkout's: a wrong answer from one is reported beside its figures,
 * not taken for a broken harness (Mesh rounds int64 ids; a --baseline may lack a workload's feature).
 */
const PEERS: ReadonlySet<TargetKind> = new Set(['tailcall', 'hive-mesh', 'gateway-baseline']);

let keyTurn = 0;

/** One request outside the load (keys in turn); what is wrong with its answer, thrown unless a peer's. */
async function sendOnce(pair: Pair, settings: Settings): Promise<string | undefined> {
  const { spec } = pair;
  const response = await request(urlOf(pair), {
    method: spec.method,
    headers: headersOf(spec, settings.keys[keyTurn++ % settings.keys.length] as string),
    body: nextBody(spec) ?? null,
    dispatcher: agent,
  });
  const problem = spec.check(response.statusCode, await response.body.text());
  if (problem !== undefined && !PEERS.has(pair.target))
    throw new Error(`${spec.method} ${urlOf(pair)}: ${problem}`);
  return problem;
}

/**
 * Before the rounds: the answer checked, the upstream calls per operation counted with nothing else
 * running (exact, unlike a count under load; static upstreams only), and the warm-up.
 */
export async function prepare(
  pair: Pair,
  settings: Settings,
): Promise<{ wrongAnswer: string | undefined; callsPerOp: number | undefined }> {
  const wrongAnswer = await sendOnce(pair, settings);
  let callsPerOp: number | undefined;
  if (petIdsOf(pair.workload.upstream) !== undefined) {
    const { upstream } = pair.stack;
    const before = (await upstream.stats()).calls ?? 0;
    for (let i = 0; i < CALLS_CHECK_OPS; i++) await sendOnce(pair, settings);
    callsPerOp = (((await upstream.stats()).calls ?? 0) - before) / CALLS_CHECK_OPS;
  }
  await warmUp(pair, settings);
  return { wrongAnswer, callsPerOp };
}

function loadOn(pair: Pair, settings: Settings, seconds: number) {
  const { workload } = pair;
  return runLoad(settings.wrk, {
    url: urlOf(pair),
    spec: pair.spec,
    seconds,
    connections: workload.connections ?? settings.connections,
    ...(workload.rate === undefined ? {} : { rate: workload.rate }),
    ...(settings.pace === undefined ? {} : { pace: settings.pace }),
    keys: settings.keys,
  });
}

/** Unmeasured load: a target's first seconds are JIT compilation, not its cost per request. */
export async function warmUp(pair: Pair, settings: Settings): Promise<void> {
  if (settings.warmup === 0) return;
  await loadOn(pair, settings, settings.warmup);
  await settle(settings);
}

/** Where the CPU stood: the target's, the upstream's, ours (this bench, its children) and the machine's. */
async function markCpu(pair: Pair) {
  const { stack, target } = pair;
  return {
    target: await processFor(stack, target).cpuMicros(),
    upstream: target === 'direct' ? undefined : await stack.upstream.cpuMicros(),
    ours: processTreeCpuMicros(process.pid),
    machine: machineCpuMicros(),
  };
}

export async function measure(pair: Pair, round: number, settings: Settings): Promise<RunResult> {
  const { stack, workload, target } = pair;
  const proc = processFor(stack, target);
  // Stats (peak RSS, keys seen) are asked for outside the CPU marks, so answering is not counted.
  await proc.stats();
  await stack.upstream.stats();
  const before = await markCpu(pair);
  const load = await loadOn(pair, settings, settings.duration);
  const after = await markCpu(pair);
  const stats = await proc.stats();
  const upstreamStats = proc === stack.upstream ? stats : await stack.upstream.stats();
  const perRequest = (micros: number) => (load.requests > 0 ? micros / load.requests : Number.NaN);
  let othersCpuShare: number | undefined;
  if (before.machine && after.machine && before.ours !== undefined && after.ours !== undefined) {
    const othersBusy = after.machine.busy - before.machine.busy - (after.ours - before.ours);
    const total = after.machine.total - before.machine.total;
    // Tick resolution can make a quiet machine's figure slightly negative.
    if (total > 0) othersCpuShare = Math.max(0, othersBusy / total);
  }
  await settle(settings);
  const { seconds, generatorCpuMicros, ...counts } = load;
  return {
    ...counts,
    workload: workload.name,
    upstream: workload.upstream,
    target,
    round,
    pid: proc.pid,
    cpus: allowedCpus(proc.pid),
    rps: load.requests / seconds,
    cpuMicrosPerRequest: perRequest(after.target - before.target),
    upstreamCpuMicrosPerRequest:
      before.upstream === undefined || after.upstream === undefined
        ? undefined
        : perRequest(after.upstream - before.upstream),
    generatorCpuMicrosPerRequest: perRequest(generatorCpuMicros),
    othersCpuShare,
    peakRssBytes: stats.peakRss,
    upstreamKeys: upstreamStats.keysSeen,
  };
}

/**
 * Two targets under load at the same time, sharing the targets' CPUs, each with half the
 * connections: their CPU per request, in that order. Whatever the machine does meanwhile (another
 * tenant, a frequency change) it does to both, so their ratio holds where runs seconds apart drift
 * by a tenth or more; sharing a core, both pay for each other's cache misses, so it compares them
 * with each other, not with the other targets. `--baseline`'s "at once" row.
 */
export async function measureAtOnce(
  pairs: readonly [Pair, Pair],
  settings: Settings,
): Promise<[number, number]> {
  const procs = pairs.map((pair) => processFor(pair.stack, pair.target));
  const before = await Promise.all(procs.map((proc) => proc.cpuMicros()));
  const loads = await Promise.all(
    pairs.map((pair) =>
      runLoad(settings.wrk, {
        url: urlOf(pair),
        spec: pair.spec,
        seconds: settings.duration,
        connections: Math.max(1, Math.floor((pair.workload.connections ?? settings.connections) / 2)),
        ...(settings.pace === undefined ? {} : { pace: settings.pace }),
        keys: settings.keys,
      }),
    ),
  );
  const after = await Promise.all(procs.map((proc) => proc.cpuMicros()));
  await settle(settings);
  const perRequest = (i: number) => {
    const requests = loads[i]?.requests ?? 0;
    return requests > 0 ? ((after[i] as number) - (before[i] as number)) / requests : Number.NaN;
  };
  return [perRequest(0), perRequest(1)];
}
