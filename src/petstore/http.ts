import type { IncomingMessage, ServerResponse } from 'node:http';
import { nestsDeeperThan } from '../contract/json-depth.ts';
import { HttpError } from './errors.ts';
import { parseJson, stringifyJson } from './json.ts';

/** Writes a JSON response (bigints exact) with an explicit Content-Length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = stringifyJson(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** `application/json`, optionally with `charset=utf-8`; anything else is refused before the body is read. */
function assertJsonContentType(header: string | undefined): void {
  const [type = '', ...params] = (header ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charsetOk = params.every((p) => !p.startsWith('charset=') || /^charset="?utf-8"?$/.test(p));
  if (type !== 'application/json' || !charsetOk) {
    throw new HttpError(
      'UNSUPPORTED_MEDIA_TYPE',
      header === undefined
        ? 'the request body must be sent with Content-Type: application/json'
        : `Content-Type must be application/json (UTF-8), got ${JSON.stringify(header)}`,
    );
  }
}

/**
 * Reads the body, counting bytes as they arrive: past `maxBytes` it stops reading (pauses the request,
 * leaving the rest unread; the server then closes the connection) and throws PAYLOAD_TOO_LARGE, whatever
 * Content-Length claimed. An honest Content-Length above the cap is refused without reading at all.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > maxBytes) {
        cleanup();
        req.pause();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, total));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError('PAYLOAD_TOO_LARGE', `the request body exceeds the limit of ${maxBytes} bytes`);
}

/** No contract body nests past 2 levels; V8's parser would overflow its stack near 10,000. */
const MAX_JSON_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Checks Content-Type, reads at most `maxBytes` and parses JSON losslessly (integers as bigint).
 * Throws UNSUPPORTED_MEDIA_TYPE, PAYLOAD_TOO_LARGE or INVALID_JSON.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  assertJsonContentType(req.headers['content-type']);
  const bytes = await readBody(req, maxBytes);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HttpError('INVALID_JSON', 'the request body is not valid UTF-8');
  }
  if (text.trim() === '')
    throw new HttpError('INVALID_JSON', 'the request body is empty; a JSON object is required');
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new HttpError(
      'INVALID_JSON',
      `the request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
    );
  }
  try {
    return parseJson(text);
  } catch (error) {
    throw new HttpError('INVALID_JSON', `the request body is not valid JSON: ${(error as Error).message}`);
  }
}
