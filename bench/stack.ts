/**
 * The targets' processes: how each hop is started, and the stack of one upstream kind (the upstream
 * and the hops its workloads use), started and stopped together.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTarget, TARGET, type TargetProcess } from './processes.ts';
import { baselineGateway, type Settings } from './settings.ts';
import {
  type HopKind,
  petIdsOf,
  type RequestSpec,
  type TargetKind,
  type UpstreamKind,
  type Workload,
} from './workloads.ts';

/**
 * How each hop is started: its kind in bench/target.ts (the gateways differ only in settings) and
 * what is laid over the bench's environment (undefined removes an inherited variable).
 */
const HOPS: Record<HopKind, { target: string; env: Record<string, string | undefined>; gateway?: true }> = {
  // The gateway as configured by default: an inherited FAST_LANE must not choose for it.
  gateway: { target: 'gateway', env: { FAST_LANE: undefined }, gateway: true },
  'gateway-yoga': { target: 'gateway', env: { FAST_LANE: 'off' }, gateway: true },
  // The default gateway with LOG_LEVEL=warn: what the default log line per operation costs.
  'gateway-warn': { target: 'gateway', env: { FAST_LANE: undefined, LOG_LEVEL: 'warn' }, gateway: true },
  // src/main.ts itself with WORKERS=2: a primary and two workers, measured as one process tree.
  'gateway-workers': { target: 'gateway-workers', env: { FAST_LANE: undefined }, gateway: true },
  'bare-proxy': { target: 'bare-proxy', env: {} },
  'json-hop': { target: 'json-hop', env: {} },
  tailcall: { target: 'tailcall', env: {} },
  // At Hive Gateway's defaults: an inherited LOG_LEVEL, which its logger reads, must not choose for it.
  'hive-mesh': { target: 'hive-mesh', env: { LOG_LEVEL: undefined } },
  // --baseline's checkout: its own gateway target (see baselineGateway).
  'gateway-baseline': { target: 'gateway', env: { FAST_LANE: undefined }, gateway: true },
};

/** A workload's targets: its own, and the baseline's gateway beside this one's when --baseline is given. */
export function targetsOf(workload: Workload, settings: Settings): Partial<Record<TargetKind, RequestSpec>> {
  const { gateway } = workload.targets;
  return settings.baseline !== undefined && gateway !== undefined
    ? { ...workload.targets, 'gateway-baseline': gateway }
    : workload.targets;
}

/** The processes behind one upstream kind: the upstream, and the hops its workloads use. */
export interface Stack {
  kind: UpstreamKind;
  upstream: TargetProcess;
  hops: Map<HopKind, TargetProcess>;
}

export async function startStack(
  kind: UpstreamKind,
  workloads: Workload[],
  settings: Settings,
): Promise<Stack> {
  const ids = petIdsOf(kind);
  const keys = settings.keys.join(',');
  const upstream =
    ids === undefined
      ? await startTarget('reference service', TARGET, { BENCH_API_KEYS: keys }, [], { args: ['petstore'] })
      : await startTarget(`${kind} upstream`, TARGET, { BENCH_API_KEYS: keys, BENCH_PET_IDS: ids }, [], {
          args: ['static-upstream'],
        });
  const needed = new Set(
    workloads
      .filter((w) => w.upstream === kind)
      .flatMap((w) => Object.keys(targetsOf(w, settings)) as TargetKind[])
      .filter((t): t is HopKind => t !== 'direct'),
  );
  // One after the other, as restartHops does: under --pin they would all start on the same CPU.
  const hops = new Map<HopKind, TargetProcess>();
  for (const hop of needed) hops.set(hop, await startHop(hop, kind, upstream.url, settings));
  return { kind, upstream, hops };
}

function startHop(hop: HopKind, kind: UpstreamKind, upstreamUrl: string, settings: Settings) {
  const { target, env, gateway = false } = HOPS[hop];
  const [file = TARGET, ...args] =
    hop === 'gateway-baseline' ? (baselineGateway(settings.baseline as string) ?? []) : [TARGET, target];
  // The workers target's flags reach its primary and workers; profiles are taken of this gateway only.
  const profile =
    hop === 'gateway-workers' || hop === 'gateway-baseline' ? [] : profileArgs(hop, kind, settings);
  const nodeArgs = gateway ? [...settings.gatewayNodeArgs, ...profile] : [];
  return startTarget(`${hop} (${kind})`, file, { ...env, UPSTREAM_URL: upstreamUrl }, nodeArgs, {
    readStdout: gateway,
    args,
    ...(settings.pin ? { pin: settings.pin } : {}),
  });
}

/**
 * Stops these hops and starts each again in a new process, one after the other (a process's
 * start-up would otherwise share the machine with another's). A process can sit about 10% off
 * another of the same code for its whole life (its heap's layout, where its code was compiled), so
 * rounds judged on fresh processes are judged across processes, not on one process's luck. The
 * upstream keeps running: every hop is measured against the same one.
 */
export async function restartHops(stack: Stack, hops: readonly HopKind[], settings: Settings): Promise<void> {
  for (const hop of hops) {
    const old = stack.hops.get(hop);
    if (old === undefined) continue;
    await old.stop();
    stack.hops.set(hop, await startHop(hop, stack.kind, stack.upstream.url, settings));
  }
}

export async function stopStack(stack: Stack): Promise<void> {
  await Promise.all([stack.upstream, ...stack.hops.values()].map((p) => p.stop()));
}

export const profileDir = join(tmpdir(), `pet-gateway-bench-${process.pid}`);

/** Processes started under --profile so far: each writes a file of its own (see summariseProfiles). */
let profiled = 0;

function profileArgs(hop: HopKind, kind: UpstreamKind, settings: Settings): string[] {
  if (!settings.profile) return [];
  return [
    '--cpu-prof',
    `--cpu-prof-dir=${profileDir}`,
    `--cpu-prof-name=${hop}-${kind}.${++profiled}.cpuprofile`,
  ];
}

export function processFor(stack: Stack, target: TargetKind): TargetProcess {
  const process = target === 'direct' ? stack.upstream : stack.hops.get(target);
  if (process === undefined) throw new Error(`no ${target} process`);
  return process;
}
