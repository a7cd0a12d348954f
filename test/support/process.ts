import { type ChildProcess, spawn } from 'node:child_process';
import { marked } from './leftovers.ts';

const ROOT = new URL('../../', import.meta.url);

/** Every process started here and not yet gone: `killSpawned` ends them after a test. */
const running = new Set<ChildProcess>();

export interface Watched {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved as they arrived. */
  output(): string;
  /**
   * The first match of `pattern` in the output: at once if it is there, else as soon as it
   * arrives. Fails with the whole output when the process exits first or `timeoutMs` passes.
   */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** The exit code (null after a signal), once the process has exited. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `killAfterMs`; resolves once the process has exited. */
  stop(killAfterMs?: number): Promise<void>;
}

/**
 * Starts a program with `env` on top of a bare environment (`PATH` only: nothing of the test
 * runner's environment leaks in), from the checkout's root unless `cwd` says otherwise, and
 * watches its output.
 */
export function spawnWatched(
  command: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: URL | string } = {},
): Watched {
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: marked({ PATH: process.env.PATH ?? '', ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own, so SIGKILL can reach what it started too (see killGroup).
    detached: true,
  });
  running.add(child);
  let output = '';
  const waiters = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk;
    for (const waiter of waiters) waiter();
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

  const waitFor = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output);
        if (match) finish(() => resolve(match));
        else if (gone() && child.stdout?.readableEnded !== false)
          finish(() => reject(new Error(`exited before ${pattern} in output:\n${output}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no ${pattern} in output within ${timeoutMs} ms:\n${output}`))),
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

  const stop = async (killAfterMs = 10_000) => {
    if (gone()) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => killGroup(child), killAfterMs);
    await exited;
    clearTimeout(timer);
  };

  return { child, output: () => output, waitFor, exited, stop };
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
 * SIGKILL to the child's process group: a killed primary (or nginx master) would otherwise leave its
 * workers running, re-parented to init. SIGTERM still goes to the child alone: it ends its own.
 */
export function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

// A test file that ends with a process still running (a failed assertion before its stop) does not
// leave it to outlive the run.
process.once('exit', killSpawned);
