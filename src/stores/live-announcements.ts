import type { RedisConnection, SharedRedis } from './redis.ts';

/**
 * One channel for every instance sharing the Redis. A message is the caller's keyed HMAC (the one
 * the Redis keys use), never the key: whoever reads the channel learns only that some caller
 * created a pet.
 */
const CHANNEL = 'pg:live:v1:created';

export interface LiveAnnouncements {
  announce(caller: string): void;
  listen(onCreate: (caller: string) => void): void;
  close(): Promise<void>;
}

/**
 * Creates announced over Redis pub/sub: published through the shared connection (under its
 * breaker: while Redis is down, an announcement is dropped and the other instances see the create
 * at their next poll), heard on a connection of its own, as a subscribed connection can do
 * nothing else.
 */
export function createRedisAnnouncements(redis: SharedRedis): LiveAnnouncements {
  let subscriber: RedisConnection | undefined;
  return {
    announce(caller) {
      redis.run((client) => client.publish(CHANNEL, caller)).catch(() => {});
    },
    listen(onCreate) {
      subscriber = redis.client.duplicate();
      // Without a listener node-redis would throw connection errors as uncaught exceptions; it
      // reconnects and subscribes again by itself.
      subscriber.on('error', () => {});
      subscriber
        .connect()
        .then(() => subscriber?.subscribe(CHANNEL, (message) => onCreate(message)))
        .catch(() => {});
    },
    async close() {
      await subscriber?.close().catch(() => {});
    },
  };
}
