import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { marked } from './leftovers.ts';
import { killGroup } from './process.ts';

const ROOT = new URL('../../', import.meta.url);

export interface StartedGateway {
  /** `http://127.0.0.1:<port>`: where the gateway listens (loopback, a free port). */
  origin: string;
  /** The embedded service's key, from the start-up line that prints it (undefined when not printed). */
  key: string | undefined;
  /** What was written to stdout first (up to 64 KB), in lines. */
  lines(): string[];
  /** The last 64 KB written to stdout, in lines (the first may be cut). */
  tail(): string[];
  /** Stops reading stdout, as a log shipper that stalls: the pipe fills. */
  pauseStdout(): void;
  resumeStdout(): void;
  /** What was written to stderr. */
  stderr(): string;
  /** SIGTERM, then waits for the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** The gateway's process id (node's own: the start script execs it). */
  pid: number;
  /** How the process ended: its exit code, or the signal that killed it; undefined while it runs. */
  exit(): number | string | undefined;
}

/**
 * Runs the gateway exactly as `npm start` does (package.json's start script: node, its flags,
 * src/main.ts), with `env` on top of a bare environment, on loopback and a free port (`PORT=0`,
 * `HOST=127.0.0.1`) and, unless given, a fresh seeded store (`PETSTORE_DB=:memory:`), optionally
 * under a file-descriptor limit (`ulimit -n`). Resolves
 * once the start-up lines are out (the key's line too, in the embedded default).
 */
export async function npmStart(
  env: Record<string, string> = {},
  options: { fileDescriptors?: number } = {},
): Promise<StartedGateway> {
  const script = (
    JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: { start: string } }
  ).scripts.start;
  // `exec` (the shell npm runs the script in gives way to node, so npm's signals reach it).
  const [command, ...args] = script.replace(/^exec\s+/, '').split(/\s+/);
  if (command !== 'node') throw new Error(`npm start runs "${script}", not node`);
  // `ulimit -n` as an operator's shell or container would set it, then the same command.
  const [file, argv] =
    options.fileDescriptors === undefined
      ? [process.execPath, args]
      : ['sh', ['-c', `ulimit -n ${options.fileDescriptors} && exec "$0" "$@"`, process.execPath, ...args]];
  const child: ChildProcess = spawn(file, argv, {
    cwd: ROOT,
    env: marked({
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      PETSTORE_DB: ':memory:',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own: the forced stop reaches its workers too.
    detached: true,
  });
  let stdout = '';
  let last = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    // The first lines and the last 64 KB are kept; the rest (one log line per request) is dropped.
    if (stdout.length < 64 * 1024) stdout += chunk;
    last = (last + chunk).slice(-64 * 1024);
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => killGroup(child), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const embedded = env.UPSTREAM_URL === undefined;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const origin = /(?:GraphQL|GraphiQL) at http:\/\/[^:/\s]+:(\d+)\/graphql/.exec(stdout)?.[1];
    // The line is the same words in a JSON log line (LOG_FORMAT=json), its `msg` ending at the quote.
    const key = /API key for this run: ([^\s"]+)"?\}?\n/.exec(stdout)?.[1];
    const upstreamLine = embedded ? /animal store at \S+\n/.test(stdout) : /upstream \S+\n/.test(stdout);
    if (origin && upstreamLine && (!embedded || key || env.PETSTORE_API_KEY)) {
      return {
        origin: `http://127.0.0.1:${origin}`,
        key: env.PETSTORE_API_KEY ?? key,
        lines: () => stdout.replace(/\n$/, '').split('\n'),
        tail: () => last.replace(/\n$/, '').split('\n'),
        pauseStdout: () => child.stdout?.pause(),
        resumeStdout: () => child.stdout?.resume(),
        stderr: () => stderr,
        stop,
        pid: child.pid as number,
        exit: () => child.exitCode ?? child.signalCode ?? undefined,
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not come up:\n${stdout}${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
