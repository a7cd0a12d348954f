/**
 * Starting and ending child processes, for the tests, the bench and the chaos runs alike. Every
 * process started here carries the test run's marker (so test/support/no-leftovers.ts sees what
 * outlives a run), leads a process group of its own unless told not to (so SIGKILL reaches what it
 * started), and is ended when this process exits, however it exits.
 *
 * It lives in test/support/ beside the marker it carries; bench/ and chaos/ import it, and it
 * imports nothing of theirs or of src/.
 */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { marked } from './leftovers.ts';

const ROOT = new URL('../../', import.meta.url);

/** Every process started here and not yet gone: `killSpawned` ends them. */
const running = new Set<ChildProcess>();

export interface Watched {
  child: ChildProcess;
  /** stdout and stderr so far (or their tail, with `outputLimit`), interleaved as they arrived. */
  output(): string;
  /**
   * The first match of `pattern` in the output's whole lines: at once if it is there, else as soon
   * as it arrives. Fails with the output when the process exits first or `timeoutMs` passes.
   */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** The exit code (null after a signal), once the process has exited. */
  readonly exited: Promise<number | null>;
  /**
   * Sends `signal` (SIGTERM: to the process alone, which ends its own children; SIGKILL: to its
   * group), then SIGKILL to the group after `graceMs`; resolves with the exit code once it exited.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
}

export interface SpawnOptions {
  /** Laid over a bare environment (`PATH` only), or over this one's with `inheritEnv`; undefined removes. */
  env?: Record<string, string | undefined>;
  /** Start from this process's environment rather than a bare one. @default false */
  inheritEnv?: boolean;
  /** @default the checkout's root */
  cwd?: URL | string;
  /** @default ['ignore', 'pipe', 'pipe'] */
  stdio?: StdioOptions;
  /**
   * A group of its own, so SIGKILL can reach what it started too (see killGroup). Off for a child
   * that must die with its parent's group (a bench target's binary). @default true
   */
  ownGroup?: boolean;
  /** Keep only about this many characters of output (a chatty process); default: all of it. */
  outputLimit?: number;
  /** What failures call it. @default the command */
  name?: string;
  /** Runs it as this user id (and the group of the same id), as a container's USER does. */
  user?: number;
}

/** Starts a program, watches its output and keeps it on the list of what ends with this process. */
export function spawnWatched(command: string, args: readonly string[], options: SpawnOptions = {}): Watched {
  const base = options.inheritEnv ? process.env : { PATH: process.env.PATH ?? '' };
  const env = Object.fromEntries(
    Object.entries({ ...base, ...options.env }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: marked(env),
    stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'],
    detached: options.ownGroup ?? true,
    ...(options.user === undefined ? {} : { uid: options.user, gid: options.user }),
  });
  running.add(child);
  let output = '';
  const waiters = new Set<() => void>();
  const limit = options.outputLimit;
  const append = (chunk: Buffer) => {
    output += chunk;
    for (const waiter of waiters) waiter();
    // Trimmed after the waiters have seen the chunk, so a line waited for is never lost to it.
    if (limit !== undefined && output.length > 4 * limit) output = output.slice(-limit);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      // Output still in the pipes arrives before 'close'.
      child.once('close', () => {
        for (const waiter of waiters) waiter();
      });
      resolve(code);
    });
  });
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const name = options.name ?? command;
  const tail = () => (limit === undefined ? output : output.slice(-limit));

  const waitFor = (pattern: RegExp, timeoutMs = 30_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        // Whole lines only, until the process is gone: a pipe's chunk may end inside a line, and
        // `API key for this run: (\S+)` must not match half a key.
        const ended =
          gone() && child.stdout?.readableEnded !== false && child.stderr?.readableEnded !== false;
        const match = pattern.exec(ended ? output : output.slice(0, output.lastIndexOf('\n') + 1));
        if (match) finish(() => resolve(match));
        else if (ended)
          finish(() => reject(new Error(`${name}: exited before ${pattern} in output:\n${tail()}`)));
      };
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(new Error(`${name}: no ${pattern} in output within ${timeoutMs} ms:\n${tail()}`)),
          ),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });

  const stop = async (signal: NodeJS.Signals = 'SIGTERM', graceMs = 12_000) => {
    if (gone()) return child.exitCode;
    if (signal === 'SIGKILL') killGroup(child);
    else child.kill(signal);
    const timer = setTimeout(() => killGroup(child), graceMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };

  return { child, output: tail, waitFor, exited, stop };
}

/** `node src/main.ts` from the checkout, as `npm start` runs it, with `env` and nothing else. */
export function startMain(env: Record<string, string> = {}): Watched {
  return spawnWatched(process.execPath, ['src/main.ts'], { env });
}

/** SIGKILLs every process started here that is still running (for `afterEach` / `afterAll`). */
export function killSpawned(): void {
  for (const child of running) killGroup(child);
  running.clear();
}

/**
 * SIGKILL to the child's process group: a killed primary (or nginx master, or a bench target that
 * runs a binary) would otherwise leave its children running, re-parented to init. SIGTERM still
 * goes to the child alone: it ends its own.
 */
export function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/**
 * For a program's entry (the bench, the chaos run): children lead groups of their own, so a Ctrl-C
 * in the terminal no longer reaches them; the program ends on it, and its exit ends them.
 */
export function exitOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
}

// A test file (or a bench, a chaos run) that ends with a process still running does not leave it
// to outlive the run.
process.once('exit', killSpawned);
