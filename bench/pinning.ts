/**
 * Pinning, the bench's default (--no-pin opts out): the measured target on CPUs of its own, and
 * everything else (the load generator, the upstream, the gateways' log readers, the bench itself) on
 * the others. Unpinned, the scheduler moves the target and its load across the same cores, and on a
 * small machine one round's figures can sit 30% off the next's; pinned, a target's CPU per request
 * is its own work, not its share of a crowded core.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Pinning {
  /** taskset's CPU list for the measured targets (and anything they start, e.g. Tailcall's binary). */
  readonly targets: string;
  /** taskset's CPU list for everything else. */
  readonly load: string;
}

/**
 * Half the CPUs this process may use (at least one), the higher-numbered ones, for the targets, and
 * the rest for the load; or why it cannot be done: fewer than two CPUs, or no taskset (util-linux).
 */
export function choosePinning(): Pinning | string {
  const result = spawnSync('taskset', ['-c', '-p', String(process.pid)], { encoding: 'utf8' });
  if (result.error !== undefined) return '--pin needs taskset (util-linux) on PATH';
  // "pid 123's current affinity list: 0-3,6"
  const cpus = cpuList(result.stdout.split(':').at(-1) ?? '');
  if (cpus.length < 2) return `--pin needs at least 2 CPUs, this process may use ${cpus.length}`;
  const split = cpus.length - Math.floor(cpus.length / 2);
  return { targets: cpus.slice(split).join(','), load: cpus.slice(0, split).join(',') };
}

/** The CPUs of a taskset list such as `0-3,6`, in order. */
export function cpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!match) continue;
    const from = Number(match[1]);
    for (let cpu = from; cpu <= Number(match[2] ?? from); cpu++) cpus.push(cpu);
  }
  return cpus;
}

/**
 * Moves this process, every thread of it, to the load's CPUs: whatever it starts afterwards (wrk,
 * the upstream, log readers, autocannon's workers) inherits them.
 */
export function pinSelf(pinning: Pinning): void {
  const result = spawnSync('taskset', ['-a', '-p', '-c', pinning.load, String(process.pid)], {
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`taskset could not pin the bench: ${result.stderr.trim()}`);
}

/** The command that starts `file` with `args` on the targets' CPUs (taskset execs it: same pid). */
export function onTargetCpus(
  pinning: Pinning | undefined,
  file: string,
  args: readonly string[],
): [string, string[]] {
  return pinning === undefined ? [file, [...args]] : ['taskset', ['-c', pinning.targets, file, ...args]];
}

/** The CPUs a process may run on, as the kernel lists them (`0-1`); undefined where there is no /proc. */
export function allowedCpus(pid: number): string | undefined {
  try {
    return /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}
