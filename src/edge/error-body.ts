import type { ServerResponse } from 'node:http';

/**
 * The GraphQL-over-HTTP error body for a request refused before Yoga sees it (malformed HTTP, the
 * connection cap, a body arriving too slowly): the same shape Yoga gives, with the code a client
 * reads.
 */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] });
}

/** Answers `status` with that body; never stored by a cache. */
export function refuse(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(errorBody(code, message));
}
