import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { CODES } from '../../codes.ts';
import { requestError } from '../../schema/errors.ts';

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Replaces Yoga's POST parser with one that enforces the body cap while reading (a lying or absent
 * Content-Length cannot get past it), accepts only JSON, bounds batches (an array of 1 to
 * `maxBatch` objects; none when `maxBatch` is 1), and never echoes request bytes in its errors
 * (Yoga's own parser passes JSON.parse's message, which quotes the body). GET requests keep
 * Yoga's parser, which reads one operation from the query string; Yoga itself refuses mutations
 * over GET. `parsedBefore` gives the parameters the fast lane already read from a request's body.
 * The body's shape is refused as a whole; an operation's parameters are checked per operation, so
 * a bad entry of a batch fails alone, as Yoga's own checks of `query` and `variables` fail it.
 */
export function useRequestBody(
  maxBytes: number,
  maxBatch: number,
  parsedBefore?: (serverContext: unknown) => GraphQLParams | undefined,
): Plugin {
  return {
    onRequestParse({ request, setRequestParser, serverContext }) {
      // Checked here, for every method, so it runs before Yoga's own body limit (25 MB, answered
      // with a different code) can see a huge declared length.
      const declared = Number(request.headers.get('content-length') ?? '0');
      if (declared > maxBytes) throw tooLarge(maxBytes);
      if (request.method !== 'POST') return;
      // The fast lane read this body and found a JSON object of plain GraphQL parameters, with
      // the checks below (media type, cap, UTF-8, JSON, object) already passed.
      const parsed = parsedBefore?.(serverContext);
      if (parsed) return setRequestParser(() => parsed);
      setRequestParser(() => parse(request, maxBytes, maxBatch));
    },
    onParams({ params }) {
      // Yoga checks the type of query, variables and extensions, but a non-string operationName
      // reaches operation selection and comes back as an undocumented OPERATION_RESOLUTION_FAILURE.
      const { operationName } = params as { operationName?: unknown };
      if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
        throw requestError(CODES.BAD_REQUEST, 'operationName must be a string or null.');
      }
    },
  };
}

async function parse(
  request: Request,
  maxBytes: number,
  maxBatch: number,
): Promise<GraphQLParams | GraphQLParams[]> {
  const mediaType = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json' && mediaType !== 'application/graphql+json') {
    throw requestError(CODES.UNSUPPORTED_MEDIA_TYPE, 'POST bodies must be application/json.');
  }
  // No content coding is decoded (RFC 9110 §15.5.16: 415): a gzip body would otherwise be read as
  // text, and supporting one would need a cap on the decompressed size.
  const coding = request.headers.get('content-encoding')?.trim().toLowerCase();
  if (coding !== undefined && coding !== '' && coding !== 'identity') {
    throw requestError(
      CODES.UNSUPPORTED_MEDIA_TYPE,
      'Request bodies must not be compressed: send the JSON without Content-Encoding.',
    );
  }
  const text = decode(await readCapped(request, maxBytes));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw requestError(CODES.BAD_REQUEST, 'The request body is not valid JSON.');
  }
  if (!Array.isArray(body)) return operation(body, '');
  if (maxBatch <= 1) {
    throw requestError(
      CODES.BAD_REQUEST,
      'Batched operations are off on this gateway (MAX_BATCH_OPERATIONS=1): send one operation per request.',
    );
  }
  if (body.length === 0 || body.length > maxBatch) {
    throw requestError(
      CODES.BAD_REQUEST,
      `A batch holds 1 to ${maxBatch} operations (MAX_BATCH_OPERATIONS); this one holds ${body.length}.`,
    );
  }
  return body.map((entry, index) => operation(entry, ` (batch entry ${index})`));
}

/** One operation's parameters, checked in onParams; `where` names a batch entry in the message. */
function operation(body: unknown, where: string): GraphQLParams {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw requestError(CODES.BAD_REQUEST, `The request body${where} must be a JSON object.`);
  }
  return body as GraphQLParams;
}

/**
 * The connection closes after the answer, or a client could keep a socket busy with a body it never
 * finishes; the edge still reads and drops what follows the answer, within a bound, so that the
 * client reads the 413 rather than a reset (edge/connections.ts, DROP_UNREAD_BODY).
 */
function tooLarge(maxBytes: number) {
  return requestError(CODES.PAYLOAD_TOO_LARGE, `The request body is larger than ${maxBytes} bytes.`, {
    http: { headers: { connection: 'close' } },
  });
}

async function readCapped(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      // The client went away mid-body (or the body was cut off): an answer nobody may read, but
      // not an internal error to log with a stack.
      throw requestError(CODES.BAD_REQUEST, 'The request body was not received completely.');
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

function decode(bytes: Uint8Array): string {
  try {
    // The decoder drops a leading BOM, which some clients send.
    return decoder.decode(bytes);
  } catch {
    throw requestError(CODES.BAD_REQUEST, 'The request body is not valid UTF-8.');
  }
}
