import { createHmac, createSecretKey, hash, randomBytes } from 'node:crypto';

/** Names one caller without holding its key: see createCallerKey. */
export type CallerKey = (authorization: string) => string;

/**
 * This process's secret, made at start: right for keys that never leave it (memory stores), and for a Redis used by this process alone. Instances that share a Redis must share a
 * secret instead (REDIS_KEY_SECRET), or each counts and caches under keys of its own.
 */
const PROCESS_SECRET = randomBytes(32);

/**
 * Names one caller without holding its key: the HMAC-SHA256 (hex) of the canonical `Authorization`
 * header under `secret`. The response cache and the rate limit key what they store by this, never
 * by the token (the coalescer keys its in-flight calls by the header itself: they live only while
 * the request holding it does). A bare SHA-256 would let whoever reads Redis test guessed keys offline;
 * under a secret they cannot, without the secret too.
 * @param secret @default this process's random secret
 */
export function createCallerKey(secret: string | Uint8Array = PROCESS_SECRET): CallerKey {
  // A KeyObject made once: createHmac given raw bytes prepares the key on every call, and this runs
  // a few times per request.
  const key = createSecretKey(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret);
  // The names of the most recent callers, kept: a caller's requests each ask for its name (the
  // rate limit, the cost budget, the cache), and an HMAC per ask measured a few percent of a
  // request's CPU. Held in this process only, as the keys themselves are while requests run.
  const recent = new Map<string, string>();
  return (authorization) => {
    let name = recent.get(authorization);
    if (name === undefined) {
      name = createHmac('sha256', key).update(authorization).digest('hex');
      if (recent.size >= MAX_REMEMBERED_CALLERS) recent.delete(recent.keys().next().value as string);
      recent.set(authorization, name);
    }
    return name;
  };
}

/** Callers whose names createCallerKey keeps; past it, the oldest goes first. */
const MAX_REMEMBERED_CALLERS = 4096;

/**
 * Names one caller in a memory of this process alone (never Redis, never another process): the
 * SHA-256 of a random per-process salt and the header, in one call. A keyed hash like the HMAC
 * above, for a name that is never shown to anyone, at a quarter of its cost: an HMAC object per
 * call is what made the HMAC the larger cost, and this runs on every upstream answer.
 */
export function createLocalCallerKey(): CallerKey {
  const salt = randomBytes(32).toString('base64');
  return (authorization) => hash('sha256', salt + authorization, 'base64');
}
