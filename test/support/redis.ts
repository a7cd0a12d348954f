import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { freePort } from './ports.ts';

/** Debian's redis-server, installed by .ci/run. */
export const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';

/**
 * Whether Redis tests can run. Locally without redis-server they are skipped and say why; in CI
 * (CI set) a missing server fails the run instead of silently skipping.
 */
export function haveRedisServer(testName: string): boolean {
  if (existsSync(REDIS_SERVER)) return true;
  if (process.env.CI) throw new Error(`redis-server not found at ${REDIS_SERVER}: .ci/run installs it`);
  console.warn(
    `[${testName}] Redis tests skipped: no redis-server at ${REDIS_SERVER} (apt-get install redis-server)`,
  );
  return false;
}

export interface RunningRedis {
  url: string;
  port: number;
  /** Kills the server abruptly (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Stops it (SIGTERM) if still running. */
  stop(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open and nothing answers, as with an overloaded Redis. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
  /** Starts a new, empty server on the same port (after kill or stop), as a restarted Redis. */
  restart(): Promise<void>;
}

/** Starts a private, persistence-free redis-server on a free loopback port. */
export async function startRedis(): Promise<RunningRedis> {
  const port = await freePort();
  let child = await spawnRedis(port);
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: () => end('SIGKILL'),
    // A paused server is let go first, or SIGTERM would wait for it forever.
    stop: () => {
      child.kill('SIGCONT');
      return end('SIGTERM');
    },
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    restart: async () => {
      await end('SIGKILL');
      child = await spawnRedis(port);
    },
  };
}

async function spawnRedis(port: number): Promise<ChildProcess> {
  const child: ChildProcess = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${output}`)));
    setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000).unref();
  });
  return child;
}
