import { createHash } from 'node:crypto';

/*
 * Conditional GETs: a GET answer a client may keep carries a tag of its bytes, and the same
 * request sent with that tag in If-None-Match is answered 304 with no body. Every lane decides and
 * writes it through here, so a 304 means the same bytes whichever lane would have answered.
 */

/**
 * A weak tag of an answer's text as written before compression (RFC 9110 §8.8.1): the br, gzip and
 * plain forms of one answer are the same answer. Two answers share a tag only when their texts are
 * equal, so a 304 never stands for an answer that differs.
 */
export function etagOf(text: string | Uint8Array): string {
  return `W/"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
}

/** The opaque part of a tag, weak or strong: weak comparison ignores the `W/`. */
function opaque(tag: string): string {
  return tag.trim().replace(/^W\//, '');
}

/** If-None-Match with weak comparison (RFC 9110 §13.1.2): any listed tag, or `*`. */
export function matchesETag(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

/**
 * Whether an answer is tagged: a GET's, that a client may keep (its Cache-Control allows reuse). A
 * mutation, an error or a request refused is `no-store`: nothing to ask again about.
 */
export function tagged(method: string | undefined, cacheControl: string): boolean {
  return method === 'GET' && !/\bno-store\b/.test(cacheControl);
}

/** What a 304 leaves out of the 200's headers: those describing the body it does not send. */
export const NOT_IN_304: ReadonlySet<string> = new Set([
  'content-length',
  'content-encoding',
  'content-type',
]);
