/**
 * The child side of the bench's process protocol: a target announces its URL over IPC, then
 * answers `stats` with its CPU and memory so far, so the parent measures each target apart.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { processTree } from './cpu-time.ts';

/** What a target reports between runs; `peakRss` is the highest RSS since the previous report. */
export interface ChildStats {
  rss: number;
  peakRss: number;
  cpuMicros: number;
  /** The static upstream's requests so far, and distinct keys since the previous report. */
  calls?: number;
  keysSeen?: number;
}

export type ChildMessage = { type: 'ready'; url: string } | ({ type: 'stats' } & ChildStats);

/** Where a target's memory figures come from; `takePeakRss` starts a new period. */
interface MemorySource {
  rss(): number;
  takePeakRss(): number;
}

/** `rss` sampled every 50 ms: a run lasts seconds, so a short spike is still seen. */
function sampled(rss: () => number): MemorySource {
  let peak = rss();
  setInterval(() => {
    peak = Math.max(peak, rss());
  }, 50).unref();
  return {
    rss,
    takePeakRss() {
      const now = rss();
      const result = Math.max(peak, now);
      peak = now;
      return result;
    },
  };
}

/** A `kB` line of /proc/<pid>/status, in bytes; NaN when the process is gone. */
function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
    return kb === undefined ? Number.NaN : Number(kb) * 1024;
  } catch {
    return Number.NaN;
  }
}

/** RSS of `pid` and every descendant (the gateway's primary and its workers), summed. */
export function treeMemory(pid: number): MemorySource {
  return sampled(() =>
    processTree(pid)
      .map((each) => statusBytes(each, 'VmRSS'))
      .reduce((total, rss) => (Number.isNaN(rss) ? total : total + rss), 0),
  );
}

/**
 * The memory of a binary the target runs: its peak is the kernel's high-water mark (VmHWM), exact
 * rather than sampled, reset after each reading through clear_refs (Linux ≥ 4.0) so each report
 * covers its own period as the sampled peaks do; where the reset is refused, the peak since start.
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

/** What a target reports instead of its own memory (a binary's), and its counts (the static upstream's). */
interface Counters {
  memory?: MemorySource;
  counts?: () => Pick<ChildStats, 'calls' | 'keysSeen'>;
}

/**
 * Announces `url` and answers `stats` until the parent goes away. Without IPC (started by hand,
 * e.g. under `--cpu-prof`) it prints the URL. Signals end it through process.exit, so --cpu-prof
 * files are written.
 */
export function announce(url: string, counters: Counters = {}): void {
  const memory = counters.memory ?? sampled(() => process.memoryUsage.rss());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
  const send = process.send?.bind(process);
  if (send === undefined) return void console.log(url);
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: { type: string }) => {
    if (message.type !== 'stats') return;
    const cpu = process.cpuUsage();
    send({
      type: 'stats',
      rss: memory.rss(),
      peakRss: memory.takePeakRss(),
      cpuMicros: cpu.user + cpu.system,
      ...counters.counts?.(),
    } satisfies ChildMessage);
  });
  send({ type: 'ready', url } satisfies ChildMessage);
}

/** The environment variable a target reads, or a clear failure naming it. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value) return value;
  console.error(`bench: ${name} is required`);
  process.exit(2);
}
