import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Storage } from './storage.ts';

/** Account that owns the development key created on an empty first start. */
export const DEV_ACCOUNT = 'development';

/** A new high-entropy key: `psk_` + 32 random bytes in base64url. */
export function generateApiKey(): string {
  return `psk_${randomBytes(32).toString('base64url')}`;
}

/** Keys are stored only as sha256 hex: enough for 256-bit random keys, and lookup by hash avoids timing leaks. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Creates `account` when needed, attaches a fresh key and returns the key (shown once, stored hashed). */
export function createApiKey(storage: Storage, account: string): string {
  const key = generateApiKey();
  storage.addKey(account, hashApiKey(key));
  return key;
}

/**
 * On a first start with no configured key and an empty key table, creates the development key so the
 * service is usable at once. Returns it (to be printed once), or undefined when nothing was created.
 */
export function ensureDevKey(storage: Storage, configuredKey: string | undefined): string | undefined {
  if (configuredKey !== undefined || storage.hasKeys()) return undefined;
  return createApiKey(storage, DEV_ACCOUNT);
}

/** Why a request's `Authorization` header was refused. */
export type AuthFailure = 'missing' | 'malformed' | 'unknown';

/**
 * Returns a check for an `Authorization` header value: only `Bearer <key>` (scheme case-insensitive,
 * RFC 9110) with a key that is the configured one or whose hash is in the key table passes
 * (undefined); anything else answers why, so the 401 can say it.
 */
export function createAuthenticator(
  storage: Storage,
  configuredKey: string | undefined,
): (authorization: string | undefined) => AuthFailure | undefined {
  const configuredHash =
    configuredKey === undefined ? undefined : Buffer.from(hashApiKey(configuredKey), 'hex');
  return (authorization) => {
    if (authorization === undefined || authorization === '') return 'missing';
    const match = /^Bearer +(\S+) *$/i.exec(authorization);
    const key = match?.[1];
    if (key === undefined) return 'malformed';
    const hash = hashApiKey(key);
    if (configuredHash !== undefined && timingSafeEqual(configuredHash, Buffer.from(hash, 'hex')))
      return undefined;
    return storage.hasKeyHash(hash) ? undefined : 'unknown';
  };
}
