import { type ChildProcess, spawn } from 'node:child_process';
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

/** What is known of a running child: its stderr so far, whether it exited, who waits for its stats. */
interface ChildState {
  errors: string;
  exited: boolean;
  readonly exit: Promise<void>;
  readonly waiters: Array<{ resolve: (stats: ChildStats) => void; reject: (error: Error) => void }>;
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
  options: { readStdout?: boolean; pin?: Pinning } = {},
): Promise<TargetProcess> {
  const child = spawnTarget(file, env, execArgv, options.readStdout === true, options.pin);
  const state = watch(child, name);
  const url = await readyUrl(child, name, state);
  const pid = child.pid ?? 0;
  const stats = () => askStats(child, name, state);
  return {
    name,
    url,
    pid,
    stats,
    async cpuMicros() {
      return processTreeCpuMicros(pid) ?? (await stats()).cpuMicros;
    },
    async stop() {
      if (state.exited) return;
      child.send({ type: 'stop' });
      const timer = setTimeout(() => killGroup(child), STOP_TIMEOUT_MS);
      await state.exit;
      clearTimeout(timer);
    },
  };
}

function spawnTarget(
  file: string,
  env: Record<string, string | undefined>,
  execArgv: string[],
  readStdout: boolean,
  pin: Pinning | undefined,
): ChildProcess {
  // `readStdout` (the gateways): stdout, the log line per operation, is a pipe that a process of
  // its own reads and discards, as containerd's or dockerd's log reader does: the gateway pays for
  // every write and for the reader's wake-ups as in production, and the reader's CPU is neither the
  // gateway's nor the load generator's. Otherwise stdout goes to /dev/null. stderr (crashes,
  // Node's warnings) is kept to explain a child that dies.
  const reader = readStdout
    ? spawn('sh', ['-c', 'exec cat > /dev/null'], { stdio: ['pipe', 'ignore', 'ignore'], detached: true })
    : undefined;
  if (reader) running.add(reader);
  const [command, args] = onTargetCpus(pin, process.execPath, [...execArgv, file]);
  const child = spawn(command, args, {
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
  return child;
}

/** Keeps the child's stderr and, when it exits, fails whoever still waits for its stats. */
function watch(child: ChildProcess, name: string): ChildState {
  const waiters: ChildState['waiters'] = [];
  let resolveExit: () => void = () => {};
  const state: ChildState = {
    errors: '',
    exited: false,
    exit: new Promise<void>((resolve) => {
      resolveExit = resolve;
    }),
    waiters,
  };
  child.stderr?.on('data', (chunk: Buffer) => {
    state.errors = (state.errors + chunk.toString()).slice(-OUTPUT_LIMIT);
  });
  child.once('exit', (code, signal) => {
    state.exited = true;
    running.delete(child);
    for (const waiter of waiters.splice(0)) {
      waiter.reject(new Error(`${name} exited (${signal ?? code}) while asked for stats:\n${state.errors}`));
    }
    resolveExit();
  });
  return state;
}

/** The URL the child announces once ready; its stats messages go to whoever waits for them. */
function readyUrl(child: ChildProcess, name: string, state: ChildState): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start in time:\n${state.errors}`)),
      READY_TIMEOUT_MS,
    );
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message.url);
      } else if (message.type === 'stats') {
        const { type: _, ...stats } = message;
        state.waiters.shift()?.resolve(stats);
      }
    });
    void state.exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready:\n${state.errors}`));
    });
  });
}

function askStats(child: ChildProcess, name: string, state: ChildState): Promise<ChildStats> {
  return new Promise<ChildStats>((resolve, reject) => {
    if (state.exited) return reject(new Error(`${name} is not running:\n${state.errors}`));
    const timer = setTimeout(() => reject(new Error(`${name} did not report stats`)), STATS_TIMEOUT_MS);
    state.waiters.push({
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
}
