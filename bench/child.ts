/**
 * The child side of the bench's process protocol. Every target runs in its own process so its CPU
 * and memory are its own; it reports its URL once, then answers `stats` requests over IPC.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { childrenOf } from './cpu-time.ts';

/** What a target reports between runs. `peakRss` is the highest RSS sampled since the previous report. */
export interface ChildStats {
  rss: number;
  peakRss: number;
  /** User + system CPU time of the whole process so far, in microseconds. */
  cpuMicros: number;
  /** Requests served so far, for targets that count them (the static upstream). */
  calls?: number;
  /** Distinct bearer keys seen since the previous report, for targets that count them (the static upstream). */
  keysSeen?: number;
}

export type ParentMessage = { type: 'stats' } | { type: 'stop' };
export type ChildMessage = { type: 'ready'; url: string } | ({ type: 'stats' } & ChildStats);

/** RSS is sampled this often; a run lasts seconds, so a short spike is still seen. */
const RSS_SAMPLE_MS = 50;

/** Where a target's memory figures come from: by default this Node process's own. */
export interface MemorySource {
  rss(): number;
  /** The highest RSS since the previous call, which starts a new period. */
  takePeakRss(): number;
}

/** This process's RSS, sampled every RSS_SAMPLE_MS. */
function ownMemory(): MemorySource {
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, RSS_SAMPLE_MS);
  sampler.unref();
  return {
    rss: () => process.memoryUsage.rss(),
    takePeakRss() {
      const rss = process.memoryUsage.rss();
      const peak = Math.max(peakRss, rss);
      peakRss = rss;
      return peak;
    },
  };
}

/** A `kB` line of /proc/<pid>/status, in bytes; NaN when the process is gone. */
function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    )?.[1];
    return kb === undefined ? Number.NaN : Number(kb) * 1024;
  } catch {
    return Number.NaN;
  }
}

/** RSS of `pid` and every descendant (the gateway's primary and its workers), summed, sampled. */
export function treeMemory(pid: number): MemorySource {
  const treeRss = () => {
    let total = 0;
    const pending = [pid];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const rss = statusBytes(next, 'VmRSS');
      if (Number.isNaN(rss)) continue;
      total += rss;
      pending.push(...childrenOf(next));
    }
    return total;
  };
  let peak = treeRss();
  setInterval(() => {
    peak = Math.max(peak, treeRss());
  }, RSS_SAMPLE_MS).unref();
  return {
    rss: treeRss,
    takePeakRss() {
      const now = treeRss();
      const result = Math.max(peak, now);
      peak = now;
      return result;
    },
  };
}

/**
 * The memory of process `pid` (the binary, not the Node process that started it), from /proc: its
 * peak RSS is the kernel's high-water mark (VmHWM), exact rather than sampled, and reset after each
 * reading by writing 5 to clear_refs (Linux ≥ 4.0), so each report covers the period since the last,
 * as the Node targets' sampled peaks do. Where the reset is refused, the peak since start.
 */
export function processMemory(pid: number): MemorySource {
  return {
    rss: () => statusBytes(pid, 'VmRSS'),
    takePeakRss() {
      const peak = statusBytes(pid, 'VmHWM');
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
      } catch {}
      return peak;
    },
  };
}

/** What announce reports besides the URL. */
export interface Counters {
  calls?: () => number;
  keysSeen?: () => number;
  /** Memory of another process the target stands for (a binary it runs); default: its own. */
  memory?: MemorySource;
  /** CPU of the target so far, in µs, where the parent has no /proc; default: its own. */
  cpuMicros?: () => number;
}

/**
 * Announces `url` to the parent and serves `stats` until told to stop or the parent goes away (then
 * the process exits, so no target outlives the bench). Without IPC (started by hand, e.g. under
 * `--cpu-prof`) it prints the URL and exits on SIGINT/SIGTERM, which lets a CPU profile be written.
 */
export function announce(url: string, counters: Counters = {}): void {
  const memory = counters.memory ?? ownMemory();
  // process.exit (not the default signal death) so --cpu-prof and --heap-prof files are written.
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));

  const send = process.send?.bind(process);
  if (send === undefined) {
    console.log(url);
    return;
  }
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stop') process.exit(0);
    if (message.type === 'stats') {
      const cpu = process.cpuUsage();
      const stats: ChildMessage = {
        type: 'stats',
        rss: memory.rss(),
        peakRss: memory.takePeakRss(),
        cpuMicros: counters.cpuMicros?.() ?? cpu.user + cpu.system,
        ...(counters.calls ? { calls: counters.calls() } : {}),
        ...(counters.keysSeen ? { keysSeen: counters.keysSeen() } : {}),
      };
      send(stats);
    }
  });
  send({ type: 'ready', url } satisfies ChildMessage);
}

/** BENCH_API_KEYS: the comma-separated keys an upstream accepts (see apiKeys in workloads.ts). */
export function requireKeys(): string[] {
  return requireEnv('BENCH_API_KEYS').split(',');
}

/** The environment variable a target reads, or a clear failure naming it. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`bench: ${name} is required`);
    process.exit(2);
  }
  return value;
}
