import { killGroup, spawnWatched, type Watched } from '../test/support/process.ts';
import type { ChildMessage, ChildStats } from './child.ts';
import { processTreeCpuMicros } from './cpu-time.ts';
import { onTargetCpus, type Pinning } from './pinning.ts';

/** A target running in its own process, driven over IPC (see child.ts). */
export interface TargetProcess {
  name: string;
  /** What the child announced: its base URL. */
  url: string;
  pid: number;
  stats(): Promise<ChildStats>;
  /**
   * User + system CPU of the process and its descendants so far, in microseconds, from /proc
   * (what the kernel counted, the stats exchange itself not included); where there is no /proc,
   * what the process reports about itself.
   */
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

/** Every target's process: `node bench/target.ts <kind>`. */
export const TARGET = 'bench/target.ts';

const READY_TIMEOUT_MS = 15_000;
const STATS_TIMEOUT_MS = 5_000;
const STOP_TIMEOUT_MS = 3_000;
/** Kept to explain a child that fails to start or dies. */
const OUTPUT_LIMIT = 16_384;

/**
 * Spawns `node <file> [args]` (the same Node binary as the bench, on the targets' CPUs when
 * pinned), waits for its `ready` message and returns a handle. `env` is laid over the bench's
 * environment; a variable set to undefined is removed from the child's. Its stderr is kept to
 * explain a child that dies early.
 */
export async function startTarget(
  name: string,
  file: string,
  env: Record<string, string | undefined>,
  execArgv: string[] = [],
  options: { readStdout?: boolean; pin?: Pinning; args?: string[] } = {},
): Promise<TargetProcess> {
  // `readStdout` (the gateways): stdout, the log line per operation, is a pipe that a process of
  // its own reads and discards, as containerd's or dockerd's log reader does: the gateway pays for
  // every write and for the reader's wake-ups as in production, and the reader's CPU is neither the
  // gateway's nor the load generator's. Otherwise stdout goes to /dev/null.
  const reader = options.readStdout
    ? spawnWatched('sh', ['-c', 'exec cat > /dev/null'], { stdio: ['pipe', 'ignore', 'ignore'] })
    : undefined;
  const [command, args] = onTargetCpus(options.pin, process.execPath, [
    ...execArgv,
    file,
    ...(options.args ?? []),
  ]);
  const target = spawnWatched(command, args, {
    env,
    inheritEnv: true,
    name,
    outputLimit: OUTPUT_LIMIT,
    stdio: ['ignore', reader?.child.stdin ?? 'ignore', 'pipe', 'ipc'],
  });
  // The child holds the pipe's write end now: once it exits, the reader sees the end and exits too.
  reader?.child.stdin?.destroy();
  const waiters: StatsWaiter[] = [];
  const url = await readyUrl(name, target, waiters);
  const pid = target.child.pid ?? 0;
  const stats = () => askStats(name, target, waiters);
  return {
    name,
    url,
    pid,
    stats,
    async cpuMicros() {
      return processTreeCpuMicros(pid) ?? (await stats()).cpuMicros;
    },
    async stop() {
      if (target.child.exitCode !== null || target.child.signalCode !== null) return;
      // Asked over IPC; if slow, SIGKILL to its group takes a binary it runs (Tailcall) with it.
      target.child.send({ type: 'stop' });
      const force = setTimeout(() => killGroup(target.child), STOP_TIMEOUT_MS);
      await target.exited;
      clearTimeout(force);
    },
  };
}

type StatsWaiter = (stats: ChildMessage & { type: 'stats' }) => void;

/** The URL the child announces once ready; its stats messages go to whoever waits for them. */
function readyUrl(name: string, target: Watched, waiters: StatsWaiter[]) {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start in time:\n${target.output()}`)),
      READY_TIMEOUT_MS,
    );
    target.child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message.url);
      } else if (message.type === 'stats') waiters.shift()?.(message);
    });
    void target.exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready:\n${target.output()}`));
    });
  });
}

function askStats(name: string, target: Watched, waiters: StatsWaiter[]): Promise<ChildStats> {
  return new Promise<ChildStats>((resolve, reject) => {
    const failed = (why: string) => reject(new Error(`${name}: ${why}:\n${target.output()}`));
    if (target.child.exitCode !== null || target.child.signalCode !== null) return failed('not running');
    const timer = setTimeout(() => failed('no stats in time'), STATS_TIMEOUT_MS);
    void target.exited.then(() => {
      clearTimeout(timer);
      failed('exited while asked for stats');
    });
    waiters.push(({ type: _, ...stats }) => {
      clearTimeout(timer);
      resolve(stats);
    });
    target.child.send({ type: 'stats' });
  });
}
