import { connect } from 'node:net';
import type { FetchSend, RawSend } from './corpus.ts';

/** What came back, with the time from the first byte sent to the last byte received. */
export interface Answer {
  status: number;
  contentType: string | undefined;
  text: string;
  ms: number;
}

const RAW_TIMEOUT_MS = 5000;

/** Sends one corpus request to `url` (the GraphQL endpoint) and reads the whole answer. */
export function send(url: string, request: FetchSend | RawSend): Promise<Answer> {
  return request.kind === 'fetch' ? sendFetch(url, request) : sendRaw(url, request);
}

async function sendFetch(url: string, request: FetchSend): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(request.search ? `${url}?${request.search}` : url, {
    method: request.method,
    headers: request.headers,
    // A copy typed as ArrayBuffer-backed, which is what fetch's BodyInit accepts.
    ...(request.body === undefined
      ? {}
      : { body: typeof request.body === 'string' ? request.body : new Uint8Array(request.body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? undefined,
    text,
    ms: performance.now() - started,
  };
}

/**
 * Writes bytes fetch would refuse to send on a fresh connection and parses the first response
 * (Content-Length or chunked). A streamed body stops as soon as the server has answered, as a
 * real client would, so an early 413 is not lost to a reset.
 */
function sendRaw(url: string, request: RawSend): Promise<Answer> {
  const { hostname, port, pathname } = new URL(url);
  const head =
    typeof request.head === 'string'
      ? Buffer.from(request.head.replace('{path}', pathname), 'latin1')
      : request.head;
  return new Promise<Answer>((resolve, reject) => {
    const started = performance.now();
    const socket = connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) return reject(error);
      const parsed = parseResponse(received);
      if (!parsed)
        return reject(
          new Error(
            `no complete HTTP response: ${JSON.stringify(received.toString('latin1').slice(0, 200))}`,
          ),
        );
      resolve({ ...parsed, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish(new Error('raw request timed out')), RAW_TIMEOUT_MS);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (parseResponse(received)) finish();
    });
    // The server may close (or reset) while we still write; what it answered before counts.
    socket.on('error', () => finish());
    socket.on('close', () => finish());
    socket.on('connect', async () => {
      socket.write(head);
      const body = request.body;
      if (!body) return;
      for (let i = 0; i < body.length && received.length === 0 && !settled; i += 16 * 1024) {
        if (!socket.write(body.subarray(i, i + 16 * 1024))) {
          await new Promise<void>((done) => {
            socket.once('drain', done);
            socket.once('close', done);
          });
        }
      }
    });
  });
}

function parseResponse(bytes: Buffer): Omit<Answer, 'ms'> | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0]?.split(' ')[1]);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const rest = bytes.subarray(end + 4);
  let body: Buffer;
  if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') {
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
    body = Buffer.concat(chunks);
  } else {
    const length = Number(headers.get('content-length') ?? '0');
    if (rest.length < length) return undefined;
    body = rest.subarray(0, length);
  }
  return { status, contentType: headers.get('content-type'), text: body.toString('utf8') };
}

/** The p-th percentile (0..100) of `values`, nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
