// @tier integration

import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { chooseEncoding, encode, encodeAsync, MIN_COMPRESSED_BYTES } from '../../src/policy/compression.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';

// Bytes on the wire: GraphQL answers and the 9 MB GraphiQL page are compressed when the client
// asks (br, gzip), never when it does not, and the page can be revalidated instead of re-sent.

const AUTH = 'Bearer compression-token';
const LIST = JSON.stringify({ query: '{ pets(limit: 30) { id name categoryId status } }' });

let gateway: RunningGateway;

useGateway(
  {
    tokens: ['compression-token'],
    seed: (u) => {
      for (let i = 0; i < 30; i++) {
        u.seed('compression-token', {
          id: String(1000 + i),
          name: `Pet ${i}`,
          categoryId: '7',
          status: 'available',
        });
      }
    },
  },
  (started) => {
    ({ gateway } = started);
  },
);

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** node:http, not fetch: fetch asks for gzip by itself and decodes before the test can look. */
function send(method: 'GET' | 'POST', headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(gateway.url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const post = (headers: Record<string, string>, body = LIST) =>
  send('POST', { 'content-type': 'application/json', authorization: AUTH, ...headers }, body);

function decode(raw: Raw): string {
  const encoding = raw.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(raw.body).toString();
  if (encoding === 'gzip') return gunzipSync(raw.body).toString();
  return raw.body.toString();
}

describe('GraphQL answers', () => {
  it('without Accept-Encoding are sent as they are, with Vary: Accept-Encoding', async () => {
    const raw = await post({});
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(raw.headers.vary).toMatch(/Accept-Encoding/);
    expect(JSON.parse(raw.body.toString()).data.pets).toHaveLength(30);
  });

  it.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['*', 'br'],
  ])('Accept-Encoding %j: %s, and the same answer once decoded', async (acceptEncoding, expected) => {
    const plain = await post({});
    const raw = await post({ 'accept-encoding': acceptEncoding });
    expect(raw.headers['content-encoding']).toBe(expected);
    expect(Number(raw.headers['content-length'])).toBe(raw.body.byteLength);
    expect(raw.body.byteLength).toBeLessThan(plain.body.byteLength / 3);
    expect(decode(raw)).toBe(plain.body.toString());
  });

  it('keeps the headers other plugins set: request id, CORS, and Vary beside Origin', async () => {
    const raw = await post({ 'accept-encoding': 'br', origin: 'https://app.example' });
    expect(raw.headers['content-encoding']).toBe('br');
    expect(raw.headers['x-request-id']).toBeDefined();
    expect(raw.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(raw.headers.vary).toMatch(/Origin/);
    expect(raw.headers.vary).toMatch(/Accept-Encoding/);
  });

  it.each(['identity', 'deflate', '*;q=0', 'br;q=0, gzip;q=0'])(
    'Accept-Encoding %j: not compressed',
    async (ae) => {
      const raw = await post({ 'accept-encoding': ae });
      expect(raw.headers['content-encoding']).toBeUndefined();
    },
  );

  it(`answers under ${MIN_COMPRESSED_BYTES} bytes are not compressed`, async () => {
    const raw = await post({ 'accept-encoding': 'br, gzip' }, JSON.stringify({ query: '{ __typename }' }));
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(raw.body.toString()).toBe('{"data":{"__typename":"Query"}}');
  });

  it('request errors are compressed too when large, with their status kept', async () => {
    const query = `{ ${'pets { nme } '.repeat(60)}}`;
    const raw = await post(
      { 'accept-encoding': 'gzip', accept: 'application/graphql-response+json' },
      JSON.stringify({ query }),
    );
    expect(raw.status).toBe(400);
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decode(raw)).errors.length).toBeGreaterThan(0);
  });
});

describe('the GraphiQL page', () => {
  const page = (headers: Record<string, string> = {}) => send('GET', { accept: 'text/html', ...headers });

  it('is compressed with br or gzip, to under a third of its 9 MB', async () => {
    const plain = await page();
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.byteLength).toBeGreaterThan(8_000_000);
    for (const encoding of ['br', 'gzip']) {
      const raw = await page({ 'accept-encoding': encoding });
      expect(raw.status).toBe(200);
      expect(raw.headers['content-encoding']).toBe(encoding);
      expect(raw.body.byteLength).toBeLessThan(plain.body.byteLength / 3);
      expect(decode(raw)).toBe(plain.body.toString());
      expect(raw.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(raw.headers.vary).toMatch(/Accept-Encoding/);
    }
  });

  it('is revalidated, not re-sent: an ETag, Cache-Control: private, no-cache, and 304 for If-None-Match', async () => {
    const first = await page({ 'accept-encoding': 'br' });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[\w-]{27}"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    const again = await page({ 'accept-encoding': 'br', 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.byteLength).toBe(0);
    expect(again.headers.etag).toBe(etag);
    // The same bytes on every load: encoded once, deterministically.
    const second = await page({ 'accept-encoding': 'br' });
    expect(second.body.equals(first.body)).toBe(true);
    expect((await page({ 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('opens with the explorer plugin showing', async () => {
    const raw = await page();
    expect(raw.body.toString()).toContain('"visiblePlugin":"GraphiQL Explorer"');
  });
});

describe('chooseEncoding and encode (shared with any other lane that writes answers)', () => {
  it.each([
    [undefined, 5000, undefined],
    ['br', MIN_COMPRESSED_BYTES - 1, undefined],
    ['br', MIN_COMPRESSED_BYTES, 'br'],
    ['GZIP', 5000, 'gzip'],
    ['x-gzip', 5000, 'gzip'],
    ['gzip;q=0.5, br;q=0.4', 5000, 'gzip'],
    ['br;q=0.5, gzip;q=0.5', 5000, 'br'],
    ['*;q=0.1, gzip;q=0', 5000, 'br'],
    ['gzip;q=nonsense', 5000, undefined],
    ['compress, deflate', 5000, undefined],
  ] as const)('%j for %d bytes: %s', (acceptEncoding, bytes, expected) => {
    expect(chooseEncoding(acceptEncoding, bytes)).toBe(expected);
  });

  it('encode and encodeAsync give the same bytes, every time', async () => {
    const body = JSON.stringify({
      data: { pets: Array.from({ length: 50 }, (_, i) => ({ id: String(i) })) },
    });
    for (const encoding of ['br', 'gzip'] as const) {
      const once = encode(body, encoding);
      expect(encode(body, encoding).equals(once)).toBe(true);
      expect((await encodeAsync(body, encoding)).equals(once)).toBe(true);
    }
  });
});
