import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync, type ZlibOptions } from 'node:zlib';

// Which encoding a response gets, and its bytes: one place, so that every lane that answers
// HTTP (Yoga's, and any lane that writes to node:http itself) makes the same choice and sends the
// same bytes for the same body. Node's zlib at fixed levels, so the output is deterministic.

/** A response content coding this gateway produces. */
export type Encoding = 'br' | 'gzip';

/**
 * Bodies smaller than this go out as they are: a few hundred bytes fit in one packet either way,
 * and compressing them costs CPU on both ends for nothing. 1 KiB is the common default (nginx's
 * gzip_min_length is lower, Express's compression uses 1 KiB).
 */
export const MIN_COMPRESSED_BYTES = 1024;

/** `Vary` value for every response whose bytes depend on the request's Accept-Encoding. */
export const VARY_ACCEPT_ENCODING = 'Accept-Encoding';

/**
 * Brotli at quality 4: higher qualities cost far more CPU per answer for a few per cent less
 * (docs/performance.md). gzip at zlib's default level 6.
 */
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };
const GZIP_OPTIONS: ZlibOptions = { level: 6 };

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * The coding to send a body of `byteLength` bytes with, given the request's `Accept-Encoding`
 * (RFC 9110 §12.5.3: q-values, `*`, `identity`), or undefined to send it as it is: no header,
 * nothing acceptable, or a body under MIN_COMPRESSED_BYTES. Brotli wins a tie.
 */
export function chooseEncoding(acceptEncoding: string | undefined, byteLength: number): Encoding | undefined {
  if (!acceptEncoding || byteLength < MIN_COMPRESSED_BYTES) return undefined;
  let br: number | undefined;
  let gz: number | undefined;
  let any: number | undefined;
  for (const entry of acceptEncoding.split(',')) {
    const [name = '', ...params] = entry.split(';');
    const coding = name.trim().toLowerCase();
    if (coding !== 'br' && coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    const q = quality(params);
    if (coding === 'br') br = q;
    else if (coding === '*') any = q;
    else gz = Math.max(gz ?? 0, q);
  }
  const brQ = br ?? any ?? 0;
  const gzipQ = gz ?? any ?? 0;
  if (brQ <= 0 && gzipQ <= 0) return undefined;
  return brQ >= gzipQ ? 'br' : 'gzip';
}

/** `q=` of one Accept-Encoding entry; 1 when absent, 0 when unreadable (never chosen). */
function quality(params: string[]): number {
  for (const param of params) {
    const [key, value] = param.split('=');
    if (key?.trim().toLowerCase() !== 'q') continue;
    const q = Number(value?.trim());
    return Number.isFinite(q) && q >= 0 && q <= 1 ? q : 0;
  }
  return 1;
}

/** The body in `encoding`, synchronously: for GraphQL answers (kilobytes, well under a millisecond). */
export function encode(body: string | Uint8Array, encoding: Encoding): Buffer {
  return encoding === 'br' ? brotliCompressSync(body, BROTLI_OPTIONS) : gzipSync(body, GZIP_OPTIONS);
}

/**
 * The same bytes as `encode`, computed on libuv's thread pool: for large bodies (the 9 MB GraphiQL
 * page takes ~0.5 s) that must not stall the event loop.
 */
export function encodeAsync(body: string | Uint8Array, encoding: Encoding): Promise<Buffer> {
  return encoding === 'br' ? brotliAsync(body, BROTLI_OPTIONS) : gzipAsync(body, GZIP_OPTIONS);
}
