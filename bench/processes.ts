import { type ChildProcess, spawn } from 'node:child_process';
import type { ChildMessage, ChildStats } from './child.ts';
import { processTreeCpuMicros } from './cpu-time.ts';

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

const READY_TIMEOUT_MS = 15_000;
const STATS_TIMEOUT_MS = 5_000;
const STOP_TIMEOUT_MS = 3_000;
/** Kept to explain a child that fails to start or dies. */
const OUTPUT_LIMIT = 16_384;

const running = new Set<ChildProcess>();

/**
 * SIGKILL to the child's process group: a target that runs a binary of its own (Tailcall) gets no
 * chance to stop it when killed, so the binary goes with it.
 */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/** Kills every child still running. Synchronous, so it can run in an `exit` handler. */
export function killAll(): void {
  for (const child of running) killGroup(child);
  running.clear();
}

/**
 * Spawns `node <file>` (the same Node binary as the bench), waits for its `ready` message and
 * returns a handle. The child's stderr is kept and shown if it dies early. `env` is laid over the
 * bench's environment; a variable set to undefined is removed from the child's.
 */
export async function startTarget(
  name: string,
  file: string,
  env: Record<string, string | undefined>,
  execArgv: string[] = [],
  options: { readStdout?: boolean } = {},
): Promise<TargetProcess> {
  // `readStdout` (the gateways): stdout, the log line per operation, is a pipe that a process of
  // its own reads and discards, as containerd's or dockerd's log reader does: the gateway pays for
  // every write and for the reader's wake-ups as in production, and the reader's CPU is neither the
  // gateway's nor the load generator's. Otherwise stdout goes to /dev/null. stderr (crashes,
  // Node's warnings) is kept to explain a child that dies.
  const reader = options.readStdout
    ? spawn('sh', ['-c', 'exec cat > /dev/null'], { stdio: ['pipe', 'ignore', 'ignore'], detached: true })
    : undefined;
  if (reader) running.add(reader);
  const child = spawn(process.execPath, [...execArgv, file], {
    cwd: new URL('..', import.meta.url),
    env: Object.fromEntries(
      Object.entries({ ...process.env, ...env }).filter(([, value]) => value !== undefined),
    ),
    stdio: ['ignore', reader?.stdin ?? 'ignore', 'pipe', 'ipc'],
    // Its own process group, for killGroup. It still exits with the bench: on IPC disconnect.
    detached: true,
  });
  running.add(child);
  // The child holds the pipe's write end now: once it exits, the reader sees the end and exits too.
  reader?.stdin?.destroy();
  reader?.once('exit', () => running.delete(reader));
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-OUTPUT_LIMIT);
  });
  let exited = false;
  const waiters: Array<{ resolve: (stats: ChildStats) => void; reject: (error: Error) => void }> = [];
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      running.delete(child);
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`${name} exited (${signal ?? code}) while asked for stats:\n${errors}`));
      }
      resolve();
    });
  });

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start in time:\n${errors}`)),
      READY_TIMEOUT_MS,
    );
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message.url);
      } else if (message.type === 'stats') {
        const { type: _, ...stats } = message;
        waiters.shift()?.resolve(stats);
      }
    });
    void exitedPromise.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready:\n${errors}`));
    });
  });

  const pid = child.pid ?? 0;
  const stats = () =>
    new Promise<ChildStats>((resolve, reject) => {
      if (exited) return reject(new Error(`${name} is not running:\n${errors}`));
      const timer = setTimeout(() => reject(new Error(`${name} did not report stats`)), STATS_TIMEOUT_MS);
      waiters.push({
        resolve: (stats) => {
          clearTimeout(timer);
          resolve(stats);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      child.send({ type: 'stats' });
    });
  return {
    name,
    url,
    pid,
    stats,
    async cpuMicros() {
      return processTreeCpuMicros(pid) ?? (await stats()).cpuMicros;
    },
    async stop() {
      if (exited) return;
      child.send({ type: 'stop' });
      const timer = setTimeout(() => killGroup(child), STOP_TIMEOUT_MS);
      await exitedPromise;
      clearTimeout(timer);
    },
  };
}
