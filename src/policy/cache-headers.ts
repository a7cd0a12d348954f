/**
 * What every GraphQL answer depends on besides its URL and body: the caller's key (the data is
 * theirs), Accept (the content type), Accept-Encoding (the compression) and Origin (the CORS
 * headers echo it). Sent whatever the request carried, so a cache never mixes two callers' answers.
 */
export const GRAPHQL_VARY = 'Accept, Accept-Encoding, Authorization, Origin';

/**
 * `Cache-Control` of a GraphQL answer. Errors and mutations are never stored. A query's data is per
 * caller, so never in a shared cache (`private`); a client may reuse it for as long as the gateway
 * itself would (the response cache's TTL, in whole seconds), and without the response cache must
 * ask again (`no-cache`).
 */
export function cacheControl(
  answer: { ok: boolean; operationType: string | undefined },
  maxAgeSeconds: number,
): string {
  if (!answer.ok || answer.operationType !== 'query') return 'no-store';
  return maxAgeSeconds > 0 ? `private, max-age=${maxAgeSeconds}` : 'private, no-cache';
}

/** The `max-age` a response cache with this TTL allows: whole seconds, 0 when off. */
export function maxAgeSeconds(responseCacheTtlMs: number | undefined): number {
  return responseCacheTtlMs === undefined ? 0 : Math.floor(responseCacheTtlMs / 1000);
}
