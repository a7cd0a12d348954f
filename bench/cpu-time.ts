/**
 * CPU time from Linux's /proc: the kernel's account of a target's whole process tree, not what it
 * says of itself, and the same for a load generator that is not Node (wrk). Undefined where there
 * is no /proc; callers fall back to what the process reports.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

let microsPerTickCache: number | undefined;

/** Microseconds per clock tick, /proc's unit of CPU time (USER_HZ, 100 on common kernels). */
function microsPerTick(): number {
  if (microsPerTickCache === undefined) {
    let hz = Number.NaN;
    try {
      hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {}
    microsPerTickCache = 1e6 / (hz > 0 ? hz : 100);
  }
  return microsPerTickCache;
}

/** A process's own CPU ticks and those of the children it has waited for; undefined when gone. */
function ticksOf(pid: number): { own: number; reaped: number } | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) may hold spaces and parentheses; the fields after it do not.
  // fields[0] is field 3 (state), so utime, stime, cutime and cstime (fields 14–17) are 11–14.
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  const ticks = {
    own: (fields[11] ?? Number.NaN) + (fields[12] ?? Number.NaN),
    reaped: (fields[13] ?? Number.NaN) + (fields[14] ?? Number.NaN),
  };
  return Number.isNaN(ticks.own + ticks.reaped) ? undefined : ticks;
}

/** `pid` and every live descendant (a gateway's workers, Tailcall's binary, what they start). */
export function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${tree[i]}/task`);
    } catch {}
    for (const tid of tasks) {
      tree.push(
        ...(read(`/proc/${tree[i]}/task/${tid}/children`) ?? '').split(' ').filter(Boolean).map(Number),
      );
    }
  }
  return tree;
}

/**
 * User + system CPU of `pid`, every live descendant and what their exited children used, in µs (a
 * child that exits between two reads is in its parent's `reaped` next time). One tick (10 ms) of
 * resolution is well under a microsecond per request over a run of seconds.
 */
export function processTreeCpuMicros(pid: number): number | undefined {
  const [root, ...descendants] = processTree(pid).map(ticksOf);
  if (root === undefined) return undefined;
  const ticks = [root, ...descendants].reduce((sum, t) => sum + (t ? t.own + t.reaped : 0), 0);
  return ticks * microsPerTick();
}

/** CPU of the children this process has waited for, in µs: across a wrk run, wrk's own. */
export function reapedChildrenCpuMicros(): number | undefined {
  const t = ticksOf(process.pid);
  return t === undefined ? undefined : t.reaped * microsPerTick();
}

/** Busy and total CPU of the whole machine so far, in µs over every core (/proc/stat). */
export function machineCpuMicros(): { busy: number; total: number } | undefined {
  const line = read('/proc/stat')?.split('\n', 1)[0];
  if (line === undefined || !line.startsWith('cpu ')) return undefined;
  // user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .slice(4)
    .trim()
    .split(/\s+/)
    .map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: busy * microsPerTick(), total: (busy + idle + iowait) * microsPerTick() };
}
