import { createRequire } from 'node:module';
import type { RedisClientType } from 'redis';

/**
 * node-redis is some 600 modules, loaded on the first connection: an instance without REDIS_URL
 * (every `npm start`, every test that starts a gateway) never pays their load at start-up.
 */
const load = createRequire(import.meta.url);

/** A node-redis client as the gateway uses it (default modules, RESP2). */
export type RedisConnection = RedisClientType;

/**
 * `up`: commands go to Redis. `down`: a command failed or timed out, or the connection dropped;
 * commands are refused at once (no socket write, no timer) while a background probe asks Redis
 * again. `connecting`: not yet answered since start; refused at once like `down`, without a warning.
 */
export type RedisState = 'connecting' | 'up' | 'down';

export interface SharedRedisOptions {
  /** A command without an answer by then counts as a failure and opens the breaker. @default 250 */
  commandTimeoutMs?: number;
  /** @default 1000 */
  connectTimeoutMs?: number;
  /** While down, how often the background probe (a PING) asks Redis again. @default 1000 */
  probeEveryMs?: number;
  /** Told of every change of state, with the error that took Redis down. Must not throw. */
  onStateChange?: (state: RedisState, error?: Error) => void;
}

/**
 * A store's Redis: the shared one it was given, or its own from a URL (then `owned`: the store
 * closes it). And how the store counts a failed command: every failure an error, and those refused
 * by the open breaker (no wait at all) also as bypassed.
 */
export function redisForStore(
  source: URL | string | SharedRedis,
  options: Pick<SharedRedisOptions, 'commandTimeoutMs' | 'connectTimeoutMs' | 'onStateChange'>,
  stats: { errors: number; bypassed?: number },
): { redis: SharedRedis; owned: boolean; failed: (error: unknown) => void } {
  const owned = typeof source === 'string' || source instanceof URL;
  const redis = owned
    ? createSharedRedis(source, {
        ...(options.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: options.commandTimeoutMs }),
        ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
        ...(options.onStateChange ? { onStateChange: options.onStateChange } : {}),
      })
    : source;
  const failed = (error: unknown) => {
    stats.errors++;
    if (error instanceof RedisUnavailableError) stats.bypassed = (stats.bypassed ?? 0) + 1;
  };
  return { redis, owned, failed };
}

/** Refused without asking Redis: its breaker is open (Redis failed or timed out recently). */
export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
}

/**
 * One Redis for every part of the gateway that must keep working without it (the response cache,
 * the rate limit, the APQ store): all of them send their commands through `run`, so they share one
 * breaker. The first command that fails or outlives `commandTimeoutMs` takes Redis `down`; every
 * later command fails at once, so each part falls back at memory speed instead of paying a timeout
 * per request, and no request pays for the probe: a PING in the background brings Redis back `up`.
 */
export interface SharedRedis {
  /**
   * The node-redis client, for a library that takes one (rate-limiter-flexible). Send its commands
   * through `run`, never directly, or they escape the breaker.
   */
  readonly client: RedisConnection;
  readonly state: RedisState;
  /**
   * Runs `command` under the breaker and the timeout. Rejects with RedisUnavailableError at once
   * while Redis is not up. `isAnswer` names rejections that are Redis's answer (e.g. "limit
   * reached"), not a failure of Redis.
   */
  run<T>(
    command: (client: RedisConnection) => Promise<T>,
    isAnswer?: (error: unknown) => boolean,
  ): Promise<T>;
  close(): Promise<void>;
}

/** Opens one shared, breaker-guarded Redis connection (see SharedRedis). */
export function createSharedRedis(url: URL | string, options: SharedRedisOptions = {}): SharedRedis {
  const timeoutMs = options.commandTimeoutMs ?? 250;
  const probeEveryMs = options.probeEveryMs ?? 1000;
  let state: RedisState = 'connecting';
  let probe: NodeJS.Timeout | undefined;
  let closed = false;
  const set = (next: RedisState, error?: Error) => {
    if (state === next) return;
    state = next;
    options.onStateChange?.(next, error);
  };
  const client = connectRedis(url, {
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
    onError: (error) => trip(error),
  });
  const ping = async () => {
    if (closed || state === 'up') return;
    try {
      if (!client.isReady) throw new Error('Redis is not connected');
      await withinMs(client.ping(), timeoutMs);
      if (!closed) set('up');
    } catch {
      // Still down: the next tick asks again.
    }
  };
  const watch = () => {
    if (probe === undefined && !closed) {
      probe = setInterval(() => void ping(), probeEveryMs);
      probe.unref();
    }
  };
  const trip = (error: Error) => {
    if (closed) return;
    if (state !== 'down') set('down', error);
    watch();
  };
  client.on('ready', () => void ping());
  watch();

  return {
    client,
    get state() {
      return state;
    },
    async run(command, isAnswer) {
      if (state !== 'up') throw new RedisUnavailableError(`Redis is ${state}`);
      try {
        return await withinMs(command(client), timeoutMs);
      } catch (error) {
        if (isAnswer?.(error)) throw error;
        trip(error instanceof Error ? error : new Error(String(error)));
        throw error;
      }
    },
    async close() {
      closed = true;
      clearInterval(probe);
      await closeRedis(client);
    },
  };
}

export interface RedisConnectionOptions {
  /** @default 1000 */
  connectTimeoutMs?: number;
  /** Every connection error (refused, lost, timed out). Must not throw. */
  onError: (error: Error) => void;
}

/**
 * Opens a node-redis connection. Commands are never queued while disconnected, so with Redis down
 * every command fails at once; the client reconnects in the background (100 ms more per attempt,
 * at most every 2 s). The connection starts now, in the background. Parts of the gateway use it
 * through createSharedRedis, which adds the breaker.
 */
export function connectRedis(url: URL | string, options: RedisConnectionOptions): RedisConnection {
  const { createClient } = load('redis') as typeof import('redis');
  const client: RedisConnection = createClient({
    url: String(url),
    disableOfflineQueue: true,
    socket: {
      connectTimeout: options.connectTimeoutMs ?? 1000,
      reconnectStrategy: (retries) => Math.min((retries + 1) * 100, 2000),
    },
  });
  // Without a listener node-redis would throw connection errors as uncaught exceptions.
  client.on('error', (error: unknown) =>
    options.onError(error instanceof Error ? error : new Error(String(error))),
  );
  client.connect().catch(() => {});
  return client;
}

/**
 * Rejects when `command` has no answer within `ms`. node-redis's own command timeout stops counting
 * once a command is written to the socket, so a Redis that accepts connections but does not answer
 * (overloaded, paused) would hold the caller until the socket dies; callers that must fall back
 * quickly race the reply against this timer instead (the late reply is simply ignored).
 */
export function withinMs<T>(command: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([command, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Closes a connection whether or not it is up: waits up to a second for pending replies, then
 * drops it (a Redis that stopped answering must not hold shutdown).
 */
export async function closeRedis(client: RedisConnection): Promise<void> {
  if (!client.isOpen) return;
  try {
    await withinMs(client.close(), 1000);
  } catch {
    if (client.isOpen) client.destroy();
  }
}

/** The shared Redis as the health endpoints see it. */
export interface RedisHealth {
  readonly state: RedisState;
  /** What works without it, degraded, while it is not up (e.g. "response cache"). */
  readonly uses: readonly string[];
}
