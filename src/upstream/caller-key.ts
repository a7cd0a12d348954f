import { createHash } from 'node:crypto';

/**
 * Names one caller without holding its key: the sha256 (hex) of the canonical `Authorization`
 * header. The header is a high-entropy API key, so its hash cannot be turned back into it; the
 * response cache, the coalescer and the rate limit key everything by this, never by the token.
 */
export function callerKey(authorization: string): string {
  return createHash('sha256').update(authorization).digest('hex');
}
