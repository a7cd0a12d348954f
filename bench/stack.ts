/**
 * The processes behind one upstream kind: the upstream and the hops its workloads use, started and
 * stopped together, and how each hop is started.
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
 * Each hop's kind in bench/target.ts and what is laid over the bench's environment (undefined
 * removes an inherited variable, so it does not choose for the target); the gateways take
 * --gateway-node-args and read their log through a pipe.
 */
const HOPS: Record<HopKind, { target: string; env: Record<string, string | undefined>; gateway?: true }> = {
  gateway: { target: 'gateway', env: { FAST_LANE: undefined }, gateway: true },
  'gateway-yoga': { target: 'gateway', env: { FAST_LANE: 'off' }, gateway: true },
  'gateway-warn': { target: 'gateway', env: { FAST_LANE: undefined, LOG_LEVEL: 'warn' }, gateway: true },
  'gateway-workers': { target: 'gateway-workers', env: { FAST_LANE: undefined }, gateway: true },
  'gateway-baseline': { target: 'gateway', env: { FAST_LANE: undefined }, gateway: true },
  'bare-proxy': { target: 'bare-proxy', env: {} },
  'json-hop': { target: 'json-hop', env: {} },
  tailcall: { target: 'tailcall', env: {} },
  // Hive Gateway's logger reads LOG_LEVEL.
  'hive-mesh': { target: 'hive-mesh', env: { LOG_LEVEL: undefined } },
};

/** A workload's targets, with the --baseline checkout's gateway beside this one's. */
export function targetsOf(workload: Workload, settings: Settings): Partial<Record<TargetKind, RequestSpec>> {
  const { gateway } = workload.targets;
  return settings.baseline !== undefined && gateway !== undefined
    ? { ...workload.targets, 'gateway-baseline': gateway }
    : workload.targets;
}

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
  const env = { ...smokeCache(settings), BENCH_API_KEYS: settings.keys.join(','), BENCH_PET_IDS: ids };
  const upstream = await startTarget(ids ? `${kind} upstream` : 'reference service', TARGET, env, {
    args: [ids ? 'static-upstream' : 'petstore'],
  });
  const stack: Stack = { kind, upstream, hops: new Map() };
  const hops = workloads
    .filter((w) => w.upstream === kind)
    .flatMap((w) => Object.keys(targetsOf(w, settings)) as TargetKind[])
    .filter((t): t is HopKind => t !== 'direct');
  await restartHops(stack, [...new Set(hops)], settings);
  return stack;
}

/**
 * (Re)starts these hops, one after the other (a start-up would otherwise share the targets' CPUs
 * with another's). A process can sit about 10% off another of the same code for its whole life, so
 * rounds on fresh processes are judged across processes. The upstream keeps running.
 */
export async function restartHops(stack: Stack, hops: readonly HopKind[], settings: Settings): Promise<void> {
  for (const hop of hops) {
    await stack.hops.get(hop)?.stop();
    stack.hops.set(hop, await startHop(hop, stack, settings));
  }
}

function startHop(hop: HopKind, stack: Stack, settings: Settings): Promise<TargetProcess> {
  const { target, env, gateway = false } = HOPS[hop];
  const [file = TARGET, ...args] =
    hop === 'gateway-baseline' ? (baselineGateway(settings.baseline as string) ?? []) : [TARGET, target];
  // The workers' flags reach the primary and the workers; profiles are of this checkout's gateways.
  const profile = settings.profile && hop !== 'gateway-workers' && hop !== 'gateway-baseline';
  const execArgv = [
    ...(gateway ? settings.gatewayNodeArgs : []),
    ...(profile && gateway
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${profileDir}`,
          `--cpu-prof-name=${hop}-${stack.kind}.${++profiled}.cpuprofile`,
        ]
      : []),
  ];
  return startTarget(
    `${hop} (${stack.kind})`,
    file,
    { ...env, ...smokeCache(settings), UPSTREAM_URL: stack.upstream.url },
    {
      execArgv,
      args,
      readStdout: gateway,
      ...(settings.pin ? { pin: settings.pin } : {}),
    },
  );
}

export async function stopStack(stack: Stack): Promise<void> {
  await Promise.all([stack.upstream, ...stack.hops.values()].map((p) => p.stop()));
}

/**
 * A smoke run only checks the harness: there Node's compile cache spares each start's compilation
 * of the same modules (a second off the run). A measured run starts every process as npm start does.
 */
const smokeCache = (settings: Settings) =>
  settings.smoke ? { NODE_COMPILE_CACHE: join(tmpdir(), 'pet-gateway-bench-compile-cache') } : {};

export const profileDir = join(tmpdir(), `pet-gateway-bench-${process.pid}`);
/** Processes profiled so far: each writes a file of its own (see summariseProfiles). */
let profiled = 0;

export function processFor(stack: Stack, target: TargetKind): TargetProcess {
  const process = target === 'direct' ? stack.upstream : stack.hops.get(target);
  if (process === undefined) throw new Error(`no ${target} process`);
  return process;
}
