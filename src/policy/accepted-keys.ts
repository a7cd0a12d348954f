import { type CallerKey, createLocalCallerKey } from '../upstream/caller-key.ts';
import type { UpstreamObserver } from '../upstream/observer.ts';

/** Keys the upstream accepted, remembered per process (least recently answered first out). */
const MAX_ACCEPTED_KEYS = 10_000;

/**
 * What the gateway knows of callers' keys: those the upstream accepted, learnt from its answers to
 * calls made with them (a 2xx accepts, a 401 refuses again). The rate limit reads it (a key not
 * accepted yet takes a point of its address's refused-keys budget), and so does `/mcp`, which
 * serves nothing beyond `initialize` to a key the upstream has not accepted.
 */
export interface AcceptedKeys {
  /** Whether the upstream accepted this canonical `Bearer …` header and has not refused it since. */
  has(authorization: string): boolean;
  /** Learns from the upstream (pass it to the upstream client's observers). */
  readonly observer: UpstreamObserver;
}

/**
 * The memory, keyed by the caller's name (caller-key.ts) rather than the key itself, so a heap dump
 * holds no key. Its names never leave this process: a local one (`createLocalCallerKey`) is
 * enough, and it is asked for on every upstream answer.
 */
export function createAcceptedKeys(callerKey: CallerKey = createLocalCallerKey()): AcceptedKeys {
  const accepted = new Map<string, true>();
  return {
    has: (authorization) => accepted.has(callerKey(authorization)),
    observer: {
      keyAnswered(auth, ok) {
        const key = callerKey(auth);
        accepted.delete(key);
        if (!ok) return;
        accepted.set(key, true);
        if (accepted.size > MAX_ACCEPTED_KEYS) accepted.delete(accepted.keys().next().value as string);
      },
    },
  };
}
