// @tier integration

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { countPets, startTestPetstore, type TestPetstore } from './helpers.ts';

const CAP = 1024 * 1024;

let petstore: TestPetstore;
beforeAll(async () => {
  petstore = await startTestPetstore();
});
afterAll(() => petstore.close());

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/**
 * POSTs raw bytes with node:http for exact control of framing: `declaredLength` sets Content-Length
 * (undefined: chunked, no Content-Length). Only `send` bytes are written and the request is never ended
 * when `end` is false, so the server must answer from what it has counted.
 */
function rawPost(
  path: string,
  options: { declaredLength?: number; send: Buffer[]; end: boolean },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(petstore.origin + path);
    const headers: Record<string, string | number> = {
      authorization: 'Bearer test-key',
      'content-type': 'application/json',
    };
    if (options.declaredLength !== undefined) headers['content-length'] = options.declaredLength;
    const req = request(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        req.destroy();
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        });
      });
    });
    // Once the server has answered it may close the socket under an unfinished upload: expected.
    req.on('error', (error) => reject(error));
    for (const chunk of options.send) req.write(chunk);
    if (options.end) req.end();
    else req.flushHeaders();
  });
}

const tooLarge = { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String), status: 413 };

describe('request body cap (1 MiB)', () => {
  test('a body of exactly 1 MiB is read (and then judged on its content)', async () => {
    const name = 'n'.repeat(CAP - '{"name":"","categoryId":1}'.length);
    const body = Buffer.from(`{"name":"${name}","categoryId":1}`);
    expect(body.length).toBe(CAP);
    const response = await rawPost('/v1/pets', { declaredLength: CAP, send: [body], end: true });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_FIELD' });
  });

  test('an honest Content-Length above the cap is refused with 413 before any byte is read', async () => {
    const before = await countPets(petstore);
    const response = await rawPost('/v1/pets', { declaredLength: CAP + 1, send: [], end: false });
    expect(response.status).toBe(413);
    expect(response.body).toEqual(tooLarge);
    expect(response.headers.connection).toBe('close');
    expect(await countPets(petstore)).toBe(before);
  });

  test('a chunked body without Content-Length is counted while read and refused past the cap', async () => {
    const before = await countPets(petstore);
    // 16 chunks of 64 KiB = the cap, plus one byte; the upload is never finished.
    const chunks = [...Array.from({ length: 16 }, () => Buffer.alloc(64 * 1024, 0x20)), Buffer.from(' ')];
    const response = await rawPost('/v1/pets', { send: chunks, end: false });
    expect(response.status).toBe(413);
    expect(response.body).toEqual(tooLarge);
    expect(await countPets(petstore)).toBe(before);
  });

  test('the quickstart endpoint has the same cap', async () => {
    const response = await rawPost('/quickstart/messages', { declaredLength: 5 * CAP, send: [], end: false });
    expect(response.status).toBe(413);
    expect(response.body).toEqual(tooLarge);
  });

  test('a client that disconnects mid-body writes nothing and does not disturb the service', async () => {
    const before = await countPets(petstore);
    await new Promise<void>((resolve) => {
      const req = request(`${petstore.url}/pets`, {
        method: 'POST',
        headers: { authorization: 'Bearer test-key', 'content-type': 'application/json' },
      });
      req.on('error', () => resolve());
      req.write('{"name":"Half","categ', () => req.destroy());
    });
    expect(await countPets(petstore)).toBe(before);
  });

  test('the service keeps serving after refusing bodies', async () => {
    expect((await petstore.api('/v1/pets?limit=1')).status).toBe(200);
  });
});
