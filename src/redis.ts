import { createClient, type RedisClientType } from 'redis';

/** A node-redis client as the gateway uses it (default modules, RESP2). */
export type RedisConnection = RedisClientType;

export interface RedisConnectionOptions {
  /** @default 1000 */
  connectTimeoutMs?: number;
  /** Every connection error (refused, lost, timed out). Must not throw. */
  onError: (error: Error) => void;
}

/**
 * Opens a node-redis connection for a part of the gateway that must keep working without Redis
 * (the response cache, the rate limit). Commands are never queued while disconnected, so with Redis
 * down every command fails at once and its caller falls back; the client reconnects in the
 * background (100 ms more per attempt, at most every 2 s). The connection starts now, in the
 * background: commands sent before Redis answers fail like commands sent while it is down.
 */
export function connectRedis(url: URL | string, options: RedisConnectionOptions): RedisConnection {
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
