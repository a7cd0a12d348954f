/**
 * CPU time read from Linux's /proc, so a target's figure is the kernel's account of its whole
 * process tree (every thread, any process it starts), not what the target says about itself, and a
 * load generator that is not Node (wrk) can be measured the same way. Everything returns undefined
 * where there is no /proc; callers fall back to what the process reports.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** Microseconds per clock tick, the unit of /proc's CPU times (USER_HZ, 100 on common kernels). */
function microsPerTick(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      ticksPerSecond = Number.NaN;
    }
    if (!(ticksPerSecond > 0)) ticksPerSecond = 100;
  }
  return 1e6 / ticksPerSecond;
}

/** One process's own CPU ticks and those of the children it has waited for. */
interface Ticks {
  own: number;
  reaped: number;
}

function ticksOf(pid: number): Ticks | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses; the fields after it do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so utime, stime, cutime and cstime (fields 14–17) are 11–14.
  const at = (index: number) => Number(fields[index] ?? Number.NaN);
  return { own: at(11) + at(12), reaped: at(13) + at(14) };
}

export function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

/**
 * User + system CPU of `pid` and every live descendant, plus what their exited children used, in
 * microseconds. Resolution is one clock tick (10 ms at USER_HZ = 100): over a run of seconds at
 * thousands of requests a second, well under a microsecond per request.
 */
export function processTreeCpuMicros(pid: number): number | undefined {
  const root = ticksOf(pid);
  if (root === undefined || Number.isNaN(root.own + root.reaped)) return undefined;
  let ticks = root.own + root.reaped;
  const pending = childrenOf(pid);
  for (let child = pending.pop(); child !== undefined; child = pending.pop()) {
    const t = ticksOf(child);
    // A child that exited between the two reads is counted by its parent's `reaped` next time.
    if (t === undefined || Number.isNaN(t.own + t.reaped)) continue;
    ticks += t.own + t.reaped;
    pending.push(...childrenOf(child));
  }
  return ticks * microsPerTick();
}

/**
 * CPU used by the children this process has waited for, in microseconds: after a load generator
 * child exits (Node waits for it before emitting `exit`), the difference across its run is its CPU.
 */
export function reapedChildrenCpuMicros(): number | undefined {
  const t = ticksOf(process.pid);
  return t === undefined || Number.isNaN(t.reaped) ? undefined : t.reaped * microsPerTick();
}

/** Machine-wide CPU time from /proc/stat, in microseconds summed over every core. */
export interface MachineCpu {
  busy: number;
  total: number;
}

/** Busy and total CPU of the whole machine so far; the busy share others used shows how quiet it was. */
export function machineCpuMicros(): MachineCpu | undefined {
  let line: string | undefined;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  } catch {
    return undefined;
  }
  if (line === undefined || !line.startsWith('cpu ')) return undefined;
  // user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .slice(4)
    .trim()
    .split(/\s+/)
    .map(Number) as number[];
  const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  return { busy: busy * microsPerTick(), total: (busy + (idle ?? 0) + (iowait ?? 0)) * microsPerTick() };
}
