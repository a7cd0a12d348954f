import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/** A process the chaos run started: its output's tail, and a way to wait for a line. */
export interface Started {
  child: ChildProcess;
  /** Resolves with the first match of `pattern` in the output since the start. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Signals the process and resolves once it has exited; SIGKILL after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
  /** The last few KB of output, for a failure message. */
  tail(): string;
}

const everyChild = new Set<ChildProcess>();
// Whatever way the chaos run ends, nothing it started outlives it.
process.on('exit', () => {
  for (const child of everyChild) killGroup(child, 'SIGKILL');
});

/**
 * SIGKILL reaches one process, and a killed nginx master (or gateway primary) leaves its workers
 * running, re-parented to init. Each child leads a process group of its own (`detached`), so the
 * forceful signal goes to the group: the child and everything it started.
 */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

// Children lead groups of their own, so a Ctrl-C in the terminal no longer reaches them: the run
// ends on it through 'exit' above, which ends them.
process.once('SIGINT', () => process.exit(130));

/** The test run's marker (test/support/leftovers.ts), passed on so its end-of-run check sees these too. */
const RUN_MARKER = 'PET_GATEWAY_TEST_RUN';

const TAIL_CHARS = 8_000;

/** Spawns `node <script>` (this Node) in the repository root, output piped and kept short. */
export function startNode(script: string, env: Record<string, string>, args: string[] = []): Started {
  return startCommand(process.execPath, [script, ...args], env, script);
}

/** Spawns any program (redis-server, nginx) in the repository root, as startNode does. */
export function startCommand(
  program: string,
  args: string[],
  env: Record<string, string>,
  name = program,
): Started {
  const script = name;
  const child = spawn(program, args, {
    cwd: new URL('..', import.meta.url),
    env: {
      PATH: process.env.PATH ?? '',
      ...(process.env[RUN_MARKER] ? { [RUN_MARKER]: process.env[RUN_MARKER] } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  everyChild.add(child);
  let output = '';
  // Matched lines are kept whole until seen; only the tail of the rest is kept (the petstore logs
  // one line per request).
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > 4 * TAIL_CHARS) output = output.slice(-TAIL_CHARS);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = once(child, 'exit').then(([code]) => {
    everyChild.delete(child);
    return code as number | null;
  });
  return {
    child,
    async waitFor(pattern, timeoutMs = 30_000) {
      for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
        const match = pattern.exec(output);
        if (match) return match;
        if (child.exitCode !== null || child.signalCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`${script}: no ${pattern} in its output:\n${output.slice(-TAIL_CHARS)}`);
    },
    async stop(signal = 'SIGTERM', graceMs = 12_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      // A polite signal to the leader alone (it ends its own workers); a forceful one to the group.
      if (signal === 'SIGKILL') killGroup(child, signal);
      else child.kill(signal);
      const force = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(force);
      return code;
    },
    tail: () => output.slice(-TAIL_CHARS),
  };
}

/**
 * Runs a full garbage collection in a process started with `--inspect=127.0.0.1:0`, through its
 * inspector (the `Debugger listening on ws://…` line it printed). What is left is what the process
 * still holds: a heap read after it is the live heap, not garbage V8 has not got round to yet.
 */
export async function collectGarbage(started: Started): Promise<void> {
  const [, url] = await started.waitFor(/Debugger listening on (ws:\/\/\S+)/);
  const socket = new WebSocket(url as string);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`inspector ${url}: cannot connect`)), {
        once: true,
      });
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector ${url}: no answer`)), 10_000);
      socket.addEventListener('message', (event) => {
        if ((JSON.parse(String(event.data)) as { id?: number }).id !== 1) return;
        clearTimeout(timer);
        resolve();
      });
      socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
  } finally {
    socket.close();
  }
}
