import { createClient, type RedisClientType } from 'redis';

/** A node-redis client as the gateway uses it (default modules, RESP2). */
export type RedisConnection = RedisClientType;

export interface RedisConnectionOptions {
  /** A command without an answer by then rejects (and whoever sent it falls back). @default 250 */
  commandTimeoutMs?: number;
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
    commandOptions: { timeout: options.commandTimeoutMs ?? 250 },
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

/** Closes a connection whether or not it is up: waits for pending replies when it can. */
export async function closeRedis(client: RedisConnection): Promise<void> {
  try {
    if (client.isOpen) await client.close();
  } catch {
    client.destroy();
  }
}
