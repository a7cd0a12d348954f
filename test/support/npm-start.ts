import { readFileSync } from 'node:fs';
import { spawnWatched } from './process.ts';

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
  /**
   * The first match of `pattern` in stdout and stderr (within their last 64 KB), at once or as soon
   * as it arrives; fails naming the pattern when the process exits first or `timeoutMs` passes.
   */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
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
 * under a file-descriptor limit (`ulimit -n`). Resolves once the start-up lines are out (the key's
 * line too, in the embedded default), each waited for as it arrives.
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
  // Its own process group (spawnWatched's default): the forced stop reaches its workers too.
  const watched = spawnWatched(file, argv, {
    env: { PORT: '0', HOST: '127.0.0.1', PETSTORE_DB: ':memory:', ...env },
    // The first lines are read by waitFor; a chatty gateway (a log line per request) keeps the rest.
    outputLimit: 64 * 1024,
    name: 'npm start',
  });
  const { child } = watched;
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
    await watched.stop('SIGTERM', 10_000);
  };
  const embedded = env.UPSTREAM_URL === undefined;
  try {
    const [, port] = await watched.waitFor(/(?:GraphQL|GraphiQL) at http:\/\/[^:/\s]+:(\d+)\/graphql/);
    let key: string | undefined;
    if (!embedded) await watched.waitFor(/upstream \S+\n/);
    else {
      await watched.waitFor(/animal store at \S+\n/);
      // The line is the same words in a JSON log line (LOG_FORMAT=json), its `msg` ending at the quote;
      // with PETSTORE_API_KEY set it names the setting instead of a key.
      const [, shown] = await watched.waitFor(/API key for this run: ([^"\n]+)"?\}?\n/);
      if (env.PETSTORE_API_KEY === undefined) key = shown;
    }
    return {
      origin: `http://127.0.0.1:${port}`,
      key: env.PETSTORE_API_KEY ?? key,
      lines: () => stdout.replace(/\n$/, '').split('\n'),
      tail: () => last.replace(/\n$/, '').split('\n'),
      waitFor: watched.waitFor,
      pauseStdout: () => child.stdout?.pause(),
      resumeStdout: () => child.stdout?.resume(),
      stderr: () => stderr,
      stop,
      pid: child.pid as number,
      exit: () => child.exitCode ?? child.signalCode ?? undefined,
    };
  } catch (error) {
    await stop();
    throw new Error(`npm start did not come up: ${(error as Error).message}`);
  }
}
