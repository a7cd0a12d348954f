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
  /** The upstream just accepted this header (`/mcp`'s own check of a key). */
  accept(authorization: string): void;
  /** Learns from the upstream (pass it to the upstream client's observers). */
  readonly observer: UpstreamObserver;
}

export interface AcceptedKeysOptions {
  /**
   * Whether every 2xx answer is remembered, as the rate limit needs (it reads the memory on every
   * request). Otherwise only `accept` adds a key, so the answers of a gateway without a rate limit
   * cost no hash each (only `/mcp` reads the memory then, and checks a key it does not hold
   * once); a 401 always forgets the key. @default true
   */
  fromEveryAnswer?: boolean;
  callerKey?: CallerKey;
}

/**
 * The memory, keyed by the caller's name (caller-key.ts) rather than the key itself, so a heap dump
 * holds no key. Its names never leave this process: a local one (`createLocalCallerKey`) is
 * enough.
 */
export function createAcceptedKeys(options: AcceptedKeysOptions = {}): AcceptedKeys {
  const { fromEveryAnswer = true, callerKey = createLocalCallerKey() } = options;
  const accepted = new Map<string, true>();
  const answered = (auth: string, ok: boolean) => {
    const key = callerKey(auth);
    accepted.delete(key);
    if (!ok) return;
    accepted.set(key, true);
    if (accepted.size > MAX_ACCEPTED_KEYS) accepted.delete(accepted.keys().next().value as string);
  };
  return {
    has: (authorization) => accepted.has(callerKey(authorization)),
    accept: (authorization) => answered(authorization, true),
    observer: {
      keyAnswered(auth, ok) {
        if (ok && !fromEveryAnswer) return;
        answered(auth, ok);
      },
    },
  };
}
