import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Answered, Code } from '../codes.ts';

/**
 * The GraphQL-over-HTTP error body for a request refused before Yoga sees it (malformed HTTP, the
 * connection cap, a body arriving too slowly): the same shape Yoga gives, with the code a client
 * reads.
 */
export function errorBody(code: Code, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code: code.code } }] });
}

/** `431 Request Header Fields Too Large`: the status line of an answer written on the socket itself. */
export function statusLine(code: Answered): string {
  return `${code.status} ${STATUS_CODES[code.status]}`;
}

/** Answers the code's status with that body; never stored by a cache. */
export function refuse(
  res: ServerResponse,
  code: Answered,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(code.status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(errorBody(code, message));
}
