import type { IncomingMessage, ServerResponse } from 'node:http';
import { cacheControl } from '../policy/cache-headers.ts';
import { chooseEncoding, encode } from '../policy/compression.ts';
import type { FastLaneOptions } from './hand-over.ts';

/**
 * Writes a successful answer as Yoga's lane would: the headers Yoga's answer carried (`learned`),
 * the same encoding choice and bytes (yoga/response/compression.ts, never a second encoder), the
 * caching of a success, then `extra` (deprecation headers) and the request id. Both of the fast
 * lane's paths (one operation, a batch) answer through it.
 */
export function writeAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  text: string,
  learned: readonly string[],
  operationType: string,
  extra: readonly string[] | undefined,
  requestId: string,
  options: Pick<FastLaneOptions, 'cacheMaxAgeSeconds'>,
): void {
  const acceptEncoding = req.headers['accept-encoding'];
  const encoding =
    typeof acceptEncoding === 'string' && acceptEncoding !== ''
      ? chooseEncoding(acceptEncoding, Buffer.byteLength(text))
      : undefined;
  // Unencoded, the text itself: Node sends it with the head in one string write, which measured
  // cheaper than a Buffer's (docs/performance.md, "Where the time goes").
  const body = encoding ? encode(text, encoding) : text;
  const headers = [
    ...learned,
    'content-length',
    String(Buffer.byteLength(body)),
    'cache-control',
    cacheControl({ ok: true, operationType }, options.cacheMaxAgeSeconds),
  ];
  if (encoding) headers.push('content-encoding', encoding);
  if (extra) headers.push(...extra);
  headers.push('x-request-id', requestId);
  res.writeHead(200, headers);
  res.end(body);
}
