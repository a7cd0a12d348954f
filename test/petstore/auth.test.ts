// @tier integration

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startPetstore } from '../../src/petstore/server.ts';
import { api, countPets, startTestPetstore, type TestPetstore, tempDir } from './helpers.ts';

describe('bearer authentication', () => {
  let petstore: TestPetstore;
  const lines: string[] = [];
  beforeAll(async () => {
    petstore = await startTestPetstore({ log: (line) => lines.push(line) });
  });
  afterAll(() => petstore.close());

  const variants: [string, string | null][] = [
    ['missing', null],
    ['a wrong key', 'Bearer wrong-key'],
    ['Basic credentials', `Basic ${Buffer.from('user:test-key').toString('base64')}`],
    ['Basic with the key itself', 'Basic test-key'],
    ['Bearer with an empty key', 'Bearer '],
    ['Bearer alone', 'Bearer'],
    ['the key without a scheme', 'test-key'],
    ['the key followed by more', 'Bearer test-key extra'],
    ['a key differing in case', 'Bearer TEST-KEY'],
  ];

  test.each(variants)('401 UNAUTHENTICATED when the key is %s, on every route', async (_label, auth) => {
    const before = await countPets(petstore);
    const requests: [string, { body?: unknown }][] = [
      ['/v1/pets', {}],
      ['/v1/pets/1', {}],
      ['/v1/pets', { body: { name: 'Sneaky', categoryId: 1 } }],
      ['/quickstart/messages', { body: { message: 'hi' } }],
    ];
    for (const [path, request] of requests) {
      const response = await petstore.api(path, { ...request, auth });
      expect(response.status, path).toBe(401);
      expect(response.body).toEqual({ code: 'UNAUTHENTICATED', message: expect.any(String), status: 401 });
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect(await countPets(petstore)).toBe(before);
  });

  test('one 401, worded for each failure: no header, not Bearer, a key it does not know', async () => {
    const message = async (auth: string | null) =>
      ((await petstore.api('/v1/pets', { auth })).body as { message: string }).message;
    expect(await message(null)).toBe('an API key is required: send Authorization: Bearer <API_KEY>');
    expect(await message('Basic dXNlcjpwdw==')).toBe('the Authorization header must be Bearer <API_KEY>');
    expect(await message('Bearer wrong-key')).toBe(
      'this API key is not known to the service: check it, or ask for a new one',
    );
  });

  test('the scheme is case-insensitive (RFC 9110)', async () => {
    expect((await petstore.api('/v1/pets', { auth: 'bearer test-key' })).status).toBe(200);
    expect((await petstore.api('/v1/pets', { auth: 'BEARER test-key' })).status).toBe(200);
  });

  test('401 is checked before the body: an invalid body without a key is still 401', async () => {
    const response = await petstore.api('/v1/pets', { body: 'not json', auth: null });
    expect(response.status).toBe(401);
  });

  test('logs one line per request with method, path, status and duration, never the key', async () => {
    lines.length = 0;
    await petstore.api('/v1/pets?limit=2');
    await petstore.api('/v1/pets/abc', { auth: 'Bearer some-secret-attempt' });
    await petstore.close();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^GET \/v1\/pets 200 \d+\.\dms$/);
    expect(lines[1]).toMatch(/^GET \/v1\/pets\/abc 401 \d+\.\dms$/);
    expect(lines.join('\n')).not.toMatch(/test-key|some-secret-attempt/);
  });
});

describe('development key', () => {
  const tmp = tempDir();
  afterAll(() => tmp.remove());

  test('is created on a first start with no configured key and an empty key table, then never again', async () => {
    const dbPath = join(tmp.dir, 'dev.db');
    const first = await startPetstore({ dbPath });
    expect(first.devKey).toMatch(/^psk_[A-Za-z0-9_-]{43}$/);
    const origin = first.url.replace(/\/v1$/, '');
    expect((await api(origin, '/v1/pets', { auth: `Bearer ${first.devKey}` })).status).toBe(200);
    expect((await api(origin, '/v1/pets', { auth: 'Bearer test-key' })).status).toBe(401);
    await first.close();

    const second = await startPetstore({ dbPath });
    expect(second.devKey).toBeUndefined();
    const secondOrigin = second.url.replace(/\/v1$/, '');
    expect((await api(secondOrigin, '/v1/pets', { auth: `Bearer ${first.devKey}` })).status).toBe(200);
    await second.close();
  });

  test('is not created when a key is configured', async () => {
    const running = await startPetstore({ dbPath: join(tmp.dir, 'configured.db'), apiKey: 'k' });
    expect(running.devKey).toBeUndefined();
    await running.close();
    // ...nor later without one: the configured key did not fill the table, so the first unconfigured start creates one.
    const later = await startPetstore({ dbPath: join(tmp.dir, 'configured.db') });
    expect(later.devKey).toBeDefined();
    await later.close();
  });

  test('only the hash of the key is stored', async () => {
    const { DatabaseSync } = await import('node:sqlite');
    const dbPath = join(tmp.dir, 'hash.db');
    const running = await startPetstore({ dbPath, seed: false });
    await running.close();
    const db = new DatabaseSync(dbPath);
    const rows = db.prepare('SELECT key_hash FROM api_keys').all() as { key_hash: string }[];
    db.close();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]?.key_hash).not.toContain(running.devKey);
  });
});
