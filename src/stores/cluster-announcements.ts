import cluster from 'node:cluster';
import type { LiveAnnouncements } from './live-announcements.ts';

// With WORKERS > 1 each worker keeps the live lists of the subscriptions it serves. A create
// through one worker must wake the creator's lists on the others too, as LIVE_STORE=redis does
// between instances: the worker tells its primary, which tells every other worker.

const CREATED = 'pet-gateway:live-created';

interface Created {
  type: typeof CREATED;
  /** The caller's keyed HMAC (the workers share its secret), never the key. */
  caller: string;
}

const isCreated = (message: unknown): message is Created =>
  typeof message === 'object' &&
  message !== null &&
  (message as { type?: unknown }).type === CREATED &&
  typeof (message as { caller?: unknown }).caller === 'string';

/** A worker's announcements, through its primary (`relayAnnouncements`). */
export function createClusterAnnouncements(): LiveAnnouncements {
  let onMessage: ((message: unknown) => void) | undefined;
  return {
    announce(caller) {
      // A primary that is gone cannot be told: the other workers see the create at their next poll.
      if (process.connected)
        process.send?.({ type: CREATED, caller } satisfies Created, undefined, {}, () => {});
    },
    listen(onCreate) {
      onMessage = (message) => {
        if (isCreated(message)) onCreate(message.caller);
      };
      process.on('message', onMessage);
    },
    async close() {
      if (onMessage) process.off('message', onMessage);
    },
  };
}

/** The primary: each worker's announcement goes to every other worker. */
export function relayAnnouncements(): void {
  cluster.on('message', (from, message: unknown) => {
    if (!isCreated(message)) return;
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker && worker !== from && worker.isConnected()) worker.send(message, undefined, () => {});
    }
  });
}
