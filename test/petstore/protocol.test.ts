// @tier integration

import { connect } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestPetstore, type TestPetstore } from './helpers.ts';

let petstore: TestPetstore;
beforeAll(async () => {
  petstore = await startTestPetstore();
});
afterAll(() => petstore.close());

/** Writes raw bytes on a fresh connection and returns everything the server sends until it closes. */
function rawExchange(bytes: string): Promise<{ statusLine: string; body: unknown }> {
  const { hostname, port } = new URL(petstore.origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ statusLine: head.split('\r\n')[0] ?? '', body: JSON.parse(body) });
    });
  });
}

test('a request Node cannot parse gets 400 BAD_REQUEST as a JSON Error', async () => {
  const response = await rawExchange('NOT HTTP AT ALL\r\n\r\n');
  expect(response.statusLine).toBe('HTTP/1.1 400 Bad Request');
  expect(response.body).toEqual({ code: 'BAD_REQUEST', message: expect.any(String), status: 400 });
});

test('headers above 16 KiB get 431 HEADERS_TOO_LARGE as a JSON Error', async () => {
  const response = await rawExchange(
    `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
  );
  expect(response.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
  expect(response.body).toEqual({ code: 'HEADERS_TOO_LARGE', message: expect.any(String), status: 431 });
});

test('a lying Content-Length shorter than the body: the rest is not valid HTTP, the request is refused', async () => {
  const before = ((await petstore.api('/v1/pets?limit=100')).body as unknown[]).length;
  const body = '{"name":"Short","categoryId":1}';
  const response = await rawExchange(
    'POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-key\r\nContent-Type: application/json\r\n' +
      `Content-Length: 5\r\nConnection: close\r\n\r\n${body}`,
  );
  // Either the parser rejects the trailing bytes first (BAD_REQUEST) or the 5-byte body is judged
  // (INVALID_JSON), depending on how the bytes arrive; never a write.
  expect(response.statusLine).toBe('HTTP/1.1 400 Bad Request');
  expect(['BAD_REQUEST', 'INVALID_JSON']).toContain((response.body as { code: string }).code);
  expect(((await petstore.api('/v1/pets?limit=100')).body as unknown[]).length).toBe(before);
});

const POST_HEAD =
  'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n';

test('a transfer coding other than chunked (gzip, chunked) is refused, as the gateway refuses it', async () => {
  const before = ((await petstore.api('/v1/pets?limit=100')).body as unknown[]).length;
  const body = '{"name":"Coded","categoryId":1}';
  const response = await rawExchange(
    `${POST_HEAD}Authorization: Bearer test-key\r\nTransfer-Encoding: gzip, chunked\r\n\r\n` +
      `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
  );
  expect(response.statusLine).toBe('HTTP/1.1 400 Bad Request');
  expect(response.body).toEqual({
    code: 'BAD_REQUEST',
    message: 'only the chunked transfer coding is supported',
    status: 400,
  });
  expect(((await petstore.api('/v1/pets?limit=100')).body as unknown[]).length).toBe(before);
});

test('two Authorization headers are refused, whichever one is valid', async () => {
  for (const pair of [
    ['Bearer test-key', 'Bearer other'],
    ['Bearer other', 'Bearer test-key'],
  ]) {
    const response = await rawExchange(
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: ${pair[0]}\r\nAuthorization: ${pair[1]}\r\nConnection: close\r\n\r\n`,
    );
    expect(response.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(response.body).toEqual({
      code: 'BAD_REQUEST',
      message: 'send exactly one Authorization header',
      status: 400,
    });
  }
});

test('JSON nested 30,000 deep is refused with the service’s own message', async () => {
  const body = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
  const response = await petstore.api('/v1/pets', { body });
  expect(response.status).toBe(400);
  expect(response.body).toEqual({
    code: 'INVALID_JSON',
    message: 'the request body nests arrays and objects deeper than 64 levels',
    status: 400,
  });
});

test('a name holding a lone surrogate is refused, not stored as U+FFFD', async () => {
  const response = await petstore.api('/v1/pets', { body: '{"name":"Rex\\ud800","categoryId":1}' });
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({
    code: 'INVALID_FIELD',
    message: '"name" must be well-formed Unicode text',
  });
});
