/**
 * Pinning, the bench's default: the measured target on CPUs of its own, everything else (the load,
 * the upstream, the log readers, the bench) on the others. Unpinned, the scheduler moves a target and
 * its load across the same cores and one round can sit 30% off the next on a small machine.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** taskset's CPU lists for the measured targets (and what they start) and for everything else. */
export interface Pinning {
  readonly targets: string;
  readonly load: string;
}

/** The higher half of the CPUs this process may use for the targets, the rest for the load; or why not. */
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
  return list
    .trim()
    .split(',')
    .flatMap((part) => {
      const [, from, to = from] = /^(\d+)(?:-(\d+))?$/.exec(part.trim()) ?? [];
      return from === undefined
        ? []
        : Array.from({ length: Number(to) - Number(from) + 1 }, (_, i) => Number(from) + i);
    });
}

/** Moves every thread of this process to the load's CPUs: whatever it starts afterwards inherits them. */
export function pinSelf(pinning: Pinning): void {
  const result = spawnSync('taskset', ['-a', '-p', '-c', pinning.load, String(process.pid)], {
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`taskset could not pin the bench: ${result.stderr.trim()}`);
}

/** The command that starts `file` with `args` on the targets' CPUs (taskset execs it: same pid). */
export function onTargetCpus(pinning: Pinning | undefined, file: string, args: string[]): [string, string[]] {
  return pinning === undefined ? [file, args] : ['taskset', ['-c', pinning.targets, file, ...args]];
}

/** The CPUs a process may run on, as the kernel lists them (`0-1`); undefined where there is no /proc. */
export function allowedCpus(pid: number): string | undefined {
  try {
    return /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}
