// @tier integration

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestPetstore, type TestPetstore } from './helpers.ts';

let petstore: TestPetstore;
beforeAll(async () => {
  petstore = await startTestPetstore();
});
afterAll(() => petstore.close());

describe('POST /quickstart/messages', () => {
  test('202 with {id, message, status: "queued", createdAt}', async () => {
    const before = Date.now();
    const response = await petstore.api('/quickstart/messages', {
      body: { message: 'Hello, animal store!' },
    });
    expect(response.status).toBe(202);
    const body = response.body as { id: string; message: string; status: string; createdAt: string };
    expect(body).toEqual({
      id: expect.stringMatching(/^msg_[0-9a-f-]{36}$/),
      message: 'Hello, animal store!',
      status: 'queued',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Date.parse(body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    const again = await petstore.api('/quickstart/messages', { body: { message: 'Hello, animal store!' } });
    expect((again.body as { id: string }).id).not.toBe(body.id);
  });

  test.each([
    ['no Authorization', null],
    ['an invalid key', 'Bearer nope'],
    ['a non-Bearer scheme', 'Token test-key'],
  ])('401 UNAUTHENTICATED with %s', async (_label, auth) => {
    const response = await petstore.api('/quickstart/messages', { body: { message: 'hi' }, auth });
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
  });

  test.each([
    ['invalid JSON', { body: '{"message":' }, 'INVALID_JSON'],
    ['an empty body', { body: '' }, 'INVALID_JSON'],
    ['no Content-Type', { body: '{"message":"hi"}', contentType: null }, 'UNSUPPORTED_MEDIA_TYPE'],
    [
      'a form Content-Type',
      { body: 'message=hi', contentType: 'application/x-www-form-urlencoded' },
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['a JSON array', { body: '["hi"]' }, 'INVALID_BODY'],
    ['no message', { body: '{}' }, 'MISSING_FIELD'],
    ['message null', { body: '{"message":null}' }, 'MISSING_FIELD'],
    ['a numeric message', { body: '{"message":1}' }, 'INVALID_FIELD'],
    ['an empty message', { body: '{"message":""}' }, 'INVALID_FIELD'],
    ['a 2001-character message', { body: JSON.stringify({ message: 'm'.repeat(2001) }) }, 'INVALID_FIELD'],
    ['an extra field', { body: '{"message":"hi","to":"x"}' }, 'UNKNOWN_FIELD'],
  ] as const)('400 %s → %s', async (_label, request, code) => {
    const response = await petstore.api('/quickstart/messages', { method: 'POST', ...request });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ code, message: expect.any(String), status: 400 });
  });
});
