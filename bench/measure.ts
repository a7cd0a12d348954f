/**
 * Measuring one target: a request sent alone to check its answer, the upstream calls one operation
 * makes, and a run under load with the CPU every process used during it.
 */
import { Agent, request } from 'undici';
import { machineCpuMicros, processTreeCpuMicros } from './cpu-time.ts';
import { nextBody, runLoad } from './load.ts';
import { allowedCpus } from './pinning.ts';
import type { TargetProcess } from './processes.ts';
import type { RunResult } from './report.ts';
import type { Settings } from './settings.ts';
import { processFor, type Stack, targetsOf } from './stack.ts';
import { headersOf, type RequestSpec, type TargetKind, type Workload } from './workloads.ts';

/** Sequential operations sent to count upstream calls per operation exactly. */
export const CALLS_CHECK_OPS = 20;
/** A short pause between runs so the previous run's sockets are closed (not in a smoke run). */
const SETTLE_MS = 200;

export const settle = (settings: Settings) =>
  new Promise((resolve) => setTimeout(resolve, settings.smoke ? 0 : SETTLE_MS));

export const agent = new Agent();

let keyTurn = 0;

/**
 * Targets that are not this checkout's: a wrong answer from one of them is reported beside its
 * figures (and in every ratio to it), not taken for a broken harness. The --baseline checkout may
 * lack a workload's feature (batch5 before batches existed). Tailcall returns ids as JSON
 * numbers, which the checks read from their source text, so it passes them unless it rounds;
 * Hive Gateway + Mesh reads the contract's int64 as BigInt, so it passes them unless it rounds too.
 */
const PEERS: ReadonlySet<TargetKind> = new Set(['tailcall', 'hive-mesh', 'gateway-baseline']);

/**
 * One request outside the load, to check the answer is the expected one before measuring it; the
 * keys rotate across these too, so the operations that count upstream calls are different callers'.
 * Returns what is wrong with the answer; throws for a target of this project (see PEERS).
 */
export async function sendOnce(
  url: string,
  target: TargetKind,
  spec: RequestSpec,
  settings: Settings,
): Promise<string | undefined> {
  const key = settings.keys[keyTurn++ % settings.keys.length] as string;
  const response = await request(url, {
    method: spec.method,
    headers: headersOf(spec, key),
    body: nextBody(spec) ?? null,
    dispatcher: agent,
  });
  const text = await response.body.text();
  const problem = spec.check(response.statusCode, text);
  if (problem !== undefined && !PEERS.has(target)) throw new Error(`${spec.method} ${url}: ${problem}`);
  return problem;
}

/** Upstream requests per operation, with nothing else running: exact, unlike a count under load. */
export async function upstreamCallsPerOp(
  stack: Stack,
  url: string,
  target: TargetKind,
  spec: RequestSpec,
  settings: Settings,
): Promise<number> {
  const before = (await stack.upstream.stats()).calls ?? 0;
  for (let i = 0; i < CALLS_CHECK_OPS; i++) await sendOnce(url, target, spec, settings);
  const after = (await stack.upstream.stats()).calls ?? 0;
  return (after - before) / CALLS_CHECK_OPS;
}

/** Where every process's CPU stood, to take differences across one run. */
interface CpuMark {
  target: number;
  upstream: number | undefined;
  /** This bench, every target, and the exited load generators: what is ours on the machine. */
  ours: number | undefined;
  machine: ReturnType<typeof machineCpuMicros>;
}

async function markCpu(proc: TargetProcess, upstream: TargetProcess | undefined): Promise<CpuMark> {
  return {
    target: await proc.cpuMicros(),
    upstream: upstream === undefined ? undefined : await upstream.cpuMicros(),
    ours: processTreeCpuMicros(process.pid),
    machine: machineCpuMicros(),
  };
}

/** `seconds` of the workload's load on one target, over the connections and at the rate it asks for. */
function loadOn(
  stack: Stack,
  workload: Workload,
  target: TargetKind,
  settings: Settings,
  wrk: string | undefined,
  seconds: number,
) {
  const spec = targetsOf(workload, settings)[target] as RequestSpec;
  return runLoad(wrk, {
    url: processFor(stack, target).url + spec.path,
    spec,
    seconds,
    connections: workload.connections ?? settings.connections,
    ...(workload.rate === undefined ? {} : { rate: workload.rate }),
    keys: settings.keys,
  });
}

/** Unmeasured load on one target: its first seconds are JIT compilation, not its cost per request. */
export async function warmUp(
  stack: Stack,
  workload: Workload,
  target: TargetKind,
  settings: Settings,
  wrk: string | undefined,
): Promise<void> {
  if (settings.warmup === 0) return;
  await loadOn(stack, workload, target, settings, wrk, settings.warmup);
  await settle(settings);
}

export async function measure(
  stack: Stack,
  workload: Workload,
  target: TargetKind,
  round: number,
  settings: Settings,
  wrk: string | undefined,
): Promise<RunResult> {
  const proc = processFor(stack, target);
  const upstream = target === 'direct' ? undefined : stack.upstream;
  // Stats (peak RSS, keys seen) are asked for outside the CPU marks, so answering them is not counted.
  await proc.stats();
  await stack.upstream.stats();
  const before = await markCpu(proc, upstream);
  const load = await loadOn(stack, workload, target, settings, wrk, settings.duration);
  const after = await markCpu(proc, upstream);
  const stats = await proc.stats();
  const upstreamStats = proc === stack.upstream ? stats : await stack.upstream.stats();
  const requests = load.requests;
  const perRequest = (micros: number) => (requests > 0 ? micros / requests : Number.NaN);
  const othersBusy =
    before.machine && after.machine && before.ours !== undefined && after.ours !== undefined
      ? after.machine.busy - before.machine.busy - (after.ours - before.ours)
      : undefined;
  const machineTotal =
    before.machine && after.machine ? after.machine.total - before.machine.total : Number.NaN;
  await settle(settings);
  return {
    workload: workload.name,
    upstream: workload.upstream,
    target,
    round,
    pid: proc.pid,
    cpus: allowedCpus(proc.pid),
    generator: load.generator,
    requests,
    rps: requests / load.seconds,
    p50Ms: load.p50Ms,
    p99Ms: load.p99Ms,
    errors: load.errors,
    non2xx: load.non2xx,
    graphqlErrors: load.graphqlErrors,
    cpuMicrosPerRequest: perRequest(after.target - before.target),
    upstreamCpuMicrosPerRequest:
      before.upstream !== undefined && after.upstream !== undefined
        ? perRequest(after.upstream - before.upstream)
        : undefined,
    generatorCpuMicrosPerRequest: perRequest(load.generatorCpuMicros),
    // Tick resolution can make a quiet machine's figure slightly negative.
    othersCpuShare:
      othersBusy === undefined || !(machineTotal > 0) ? undefined : Math.max(0, othersBusy / machineTotal),
    peakRssBytes: stats.peakRss,
    upstreamKeys: upstreamStats.keysSeen,
  };
}
