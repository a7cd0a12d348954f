import { existsSync } from 'node:fs';
import { freePort } from './ports.ts';
import { spawnWatched, type Watched } from './process.ts';

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

/**
 * Starts a private, persistence-free redis-server on a free loopback port, through the one process
 * harness (test/support/process.ts): marked for the run's leftover check, ended with this process.
 */
export async function startRedis(): Promise<RunningRedis> {
  const port = await freePort();
  let server = await spawnRedis(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: async () => void (await server.stop('SIGKILL')),
    // A paused server is let go first, or SIGTERM would wait for it forever.
    stop: async () => {
      server.child.kill('SIGCONT');
      await server.stop('SIGTERM');
    },
    pause: () => void server.child.kill('SIGSTOP'),
    resume: () => void server.child.kill('SIGCONT'),
    restart: async () => {
      await server.stop('SIGKILL');
      server = await spawnRedis(port);
    },
  };
}

async function spawnRedis(port: number): Promise<Watched> {
  const server = spawnWatched(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { name: 'redis-server' },
  );
  await server.waitFor(/Ready to accept connections/, 10_000);
  return server;
}
