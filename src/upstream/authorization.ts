/** Keys are opaque to the contract; anything longer than this is abuse, not a key. */
export const MAX_AUTHORIZATION_LENGTH = 4096;

/**
 * `Bearer <b64token>` (RFC 6750). The scheme is case-insensitive and may be followed by several
 * spaces (RFC 9110 §11.1, §11.4), as the upstream reads it; the token itself is case-sensitive.
 */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The caller's `Authorization` header, forwarded verbatim; undefined when the caller sent none. */
export type Authorization = string | undefined;

/**
 * The caller's credentials as the gateway forwards them, or why there are none (a sentence for the
 * caller: schema/errors.ts words it as UNAUTHENTICATED).
 */
export type CallerAuthorization =
  | { authorization: string; problem?: undefined }
  | { authorization: undefined; problem: string };

/**
 * Reads the caller's `Authorization` header. A usable one comes back in its canonical spelling,
 * `Bearer <token>`: that is what goes upstream and what the response cache hashes, so `bearer k`
 * and `Bearer k` are one caller. Anything else is a problem, raised as UNAUTHENTICATED only when a
 * field needs the upstream (introspection needs no key).
 */
export function bearerAuthorization(header: string | null | undefined): CallerAuthorization {
  if (header === null || header === undefined || header === '') {
    return {
      authorization: undefined,
      problem: 'An Authorization: Bearer <API key> header is required.',
    };
  }
  const token = header.length <= MAX_AUTHORIZATION_LENGTH ? BEARER.exec(header)?.[1] : undefined;
  if (token === undefined) {
    return {
      authorization: undefined,
      problem: 'The Authorization header must be "Bearer <API key>".',
    };
  }
  return { authorization: `Bearer ${token}` };
}
