// @tier integration

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GET_PET_DEPRECATED, PET_SUNSET_HTTP } from '../../src/contract/animal-store.ts';
import { countPets, startTestPetstore, type TestPetstore } from './helpers.ts';

let petstore: TestPetstore;
beforeAll(async () => {
  petstore = await startTestPetstore();
});
afterAll(() => petstore.close());

type PetBody = { id: number; name: string; categoryId: number; status?: string };

describe('GET /pets', () => {
  test('an empty database is seeded with 36 pets across the three statuses', async () => {
    const { status, body } = await petstore.api('/v1/pets?limit=100');
    expect(status).toBe(200);
    const pets = body as PetBody[];
    expect(pets).toHaveLength(36);
    for (const value of ['available', 'pending', 'sold']) {
      expect(pets.filter((pet) => pet.status === value)).toHaveLength(12);
    }
  });

  test('returns 20 pets when limit is absent', async () => {
    const { status, body, headers } = await petstore.api('/v1/pets');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(body).toHaveLength(20);
  });

  test.each([
    ['1', 1],
    ['100', 36],
    ['36', 36],
    ['7', 7],
  ])('accepts limit=%s', async (limit, expected) => {
    const { status, body } = await petstore.api(`/v1/pets?limit=${limit}`);
    expect(status).toBe(200);
    expect(body).toHaveLength(expected);
  });

  test.each([
    ['limit=0'],
    ['limit=101'],
    ['limit=abc'],
    ['limit=1.5'],
    ['limit='],
    ['limit=-1'],
    ['limit=%201'],
    ['limit=1e1'],
    ['limit=99999999999999999999'],
    ['limit=5&limit=6'],
  ])('rejects %s with 400 INVALID_LIMIT', async (query) => {
    const { status, body } = await petstore.api(`/v1/pets?${query}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'INVALID_LIMIT', status: 400 });
    expect((body as { message: string }).message).toMatch(/limit/);
  });

  test.each(['available', 'pending', 'sold'])('status=%s lists only that status', async (value) => {
    const { status, body } = await petstore.api(`/v1/pets?status=${value}&limit=100`);
    expect(status).toBe(200);
    const pets = body as PetBody[];
    expect(pets.length).toBeGreaterThanOrEqual(12);
    expect(pets.every((pet) => pet.status === value)).toBe(true);
  });

  test('status combines with limit', async () => {
    const { body } = await petstore.api('/v1/pets?status=sold&limit=2');
    expect(body).toEqual([
      { id: 3, name: 'Luna', categoryId: 3, status: 'sold' },
      { id: 6, name: 'Cooper', categoryId: 2, status: 'sold' },
    ]);
  });

  test.each([['status=lost'], ['status='], ['status=SOLD'], ['status=sold&status=pending']])(
    'rejects %s with 400 INVALID_STATUS',
    async (query) => {
      const { status, body } = await petstore.api(`/v1/pets?${query}`);
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: 'INVALID_STATUS', status: 400 });
    },
  );
});

describe('POST /pets', () => {
  test('creates a pet: 201, the Pet with a new id, Location, and it is listed and fetchable', async () => {
    const before = await countPets(petstore);
    const created = await petstore.api('/v1/pets', {
      body: { name: 'Rex', categoryId: 7, status: 'pending' },
    });
    expect(created.status).toBe(201);
    const pet = created.body as PetBody;
    expect(pet).toEqual({ id: pet.id, name: 'Rex', categoryId: 7, status: 'pending' });
    expect(Number.isInteger(pet.id)).toBe(true);
    expect(created.headers.get('location')).toBe(`/v1/pets/${pet.id}`);
    expect(await countPets(petstore)).toBe(before + 1);
    const fetched = await petstore.api(`/v1/pets/${pet.id}`);
    expect(fetched.text).toBe(created.text);
  });

  test('status is optional: omitted or null gives a pet without status (the field is left out)', async () => {
    for (const body of [
      { name: 'Plain', categoryId: 1 },
      { name: 'Nullish', categoryId: 1, status: null },
    ]) {
      const created = await petstore.api('/v1/pets', { body });
      expect(created.status).toBe(201);
      expect(created.body).not.toHaveProperty('status');
      const fetched = await petstore.api(`/v1/pets/${(created.body as PetBody).id}`);
      expect(fetched.body).not.toHaveProperty('status');
    }
  });

  test('the name is stored trimmed; 200 characters is the maximum; unicode counts code points', async () => {
    const trimmed = await petstore.api('/v1/pets', { body: { name: '  Fido \n', categoryId: 2 } });
    expect(trimmed.body).toMatchObject({ name: 'Fido' });
    const longest = await petstore.api('/v1/pets', { body: { name: '🐕'.repeat(200), categoryId: 2 } });
    expect(longest.status).toBe(201);
  });

  test('categoryId accepts the int64 extremes exactly and safe integers written as 3.0', async () => {
    for (const value of ['9223372036854775807', '-9223372036854775808', '0']) {
      const created = await petstore.api('/v1/pets', { body: `{"name":"Edge","categoryId":${value}}` });
      expect(created.status).toBe(201);
      expect(created.text).toContain(`"categoryId":${value}`);
      const id = /"id":(\d+)/.exec(created.text)?.[1];
      const fetched = await petstore.api(`/v1/pets/${id}`);
      expect(fetched.text).toContain(`"categoryId":${value}`);
    }
    const float = await petstore.api('/v1/pets', { body: '{"name":"Float","categoryId":3.0}' });
    expect(float.text).toContain('"categoryId":3}');
  });

  const invalid: [string, { body?: string; contentType?: string | null }, number, string][] = [
    [
      'no Content-Type',
      { body: '{"name":"a","categoryId":1}', contentType: null },
      400,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'text/plain',
      { body: '{"name":"a","categoryId":1}', contentType: 'text/plain' },
      400,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a non-UTF-8 charset',
      { body: '{"name":"a","categoryId":1}', contentType: 'application/json; charset=latin1' },
      400,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['an empty body', { body: '' }, 400, 'INVALID_JSON'],
    ['malformed JSON', { body: '{"name":' }, 400, 'INVALID_JSON'],
    ['trailing garbage', { body: '{"name":"a","categoryId":1} x' }, 400, 'INVALID_JSON'],
    ['a JSON array', { body: '[{"name":"a","categoryId":1}]' }, 400, 'INVALID_BODY'],
    ['JSON null', { body: 'null' }, 400, 'INVALID_BODY'],
    ['a JSON string', { body: '"pet"' }, 400, 'INVALID_BODY'],
    ['a JSON number', { body: '42' }, 400, 'INVALID_BODY'],
    ['an empty object', { body: '{}' }, 400, 'MISSING_FIELD'],
    ['no name', { body: '{"categoryId":1}' }, 400, 'MISSING_FIELD'],
    ['name null', { body: '{"name":null,"categoryId":1}' }, 400, 'MISSING_FIELD'],
    ['no categoryId', { body: '{"name":"a"}' }, 400, 'MISSING_FIELD'],
    ['a numeric name', { body: '{"name":5,"categoryId":1}' }, 400, 'INVALID_FIELD'],
    ['an empty name', { body: '{"name":"","categoryId":1}' }, 400, 'INVALID_FIELD'],
    ['a blank name', { body: '{"name":"   ","categoryId":1}' }, 400, 'INVALID_FIELD'],
    ['a 201-character name', { body: `{"name":"${'n'.repeat(201)}","categoryId":1}` }, 400, 'INVALID_FIELD'],
    ['categoryId as a string', { body: '{"name":"a","categoryId":"1"}' }, 400, 'INVALID_FIELD'],
    ['categoryId 1.5', { body: '{"name":"a","categoryId":1.5}' }, 400, 'INVALID_FIELD'],
    ['categoryId true', { body: '{"name":"a","categoryId":true}' }, 400, 'INVALID_FIELD'],
    [
      'categoryId above int64',
      { body: '{"name":"a","categoryId":9223372036854775808}' },
      400,
      'INVALID_FIELD',
    ],
    [
      'categoryId below int64',
      { body: '{"name":"a","categoryId":-9223372036854775809}' },
      400,
      'INVALID_FIELD',
    ],
    ['categoryId 1e300', { body: '{"name":"a","categoryId":1e300}' }, 400, 'INVALID_FIELD'],
    ['an unknown status', { body: '{"name":"a","categoryId":1,"status":"lost"}' }, 400, 'INVALID_FIELD'],
    ['a numeric status', { body: '{"name":"a","categoryId":1,"status":1}' }, 400, 'INVALID_FIELD'],
    ['a client-chosen id', { body: '{"id":5,"name":"a","categoryId":1}' }, 400, 'UNKNOWN_FIELD'],
    ['an extra field', { body: '{"name":"a","categoryId":1,"color":"red"}' }, 400, 'UNKNOWN_FIELD'],
    ['a __proto__ field', { body: '{"name":"a","categoryId":1,"__proto__":{}}' }, 400, 'UNKNOWN_FIELD'],
  ];
  test.each(invalid)('rejects %s (%i %s) and writes nothing', async (_label, request, status, code) => {
    const before = await countPets(petstore);
    const response = await petstore.api('/v1/pets', { method: 'POST', ...request });
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ code, message: expect.any(String), status });
    expect(await countPets(petstore)).toBe(before);
  });

  test('rejects a body that is not valid UTF-8 with INVALID_JSON', async () => {
    const before = await countPets(petstore);
    const response = await fetch(`${petstore.url}/pets`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-key', 'content-type': 'application/json' },
      body: Buffer.from([0x7b, 0x22, 0x6e, 0xff, 0x22, 0x7d]),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'INVALID_JSON' });
    expect(await countPets(petstore)).toBe(before);
  });
});

describe('GET /pets/{petId} (deprecated)', () => {
  const expectDeprecationHeaders = (headers: Headers): void => {
    expect(headers.get('deprecation')).toBe(GET_PET_DEPRECATED);
    expect(headers.get('sunset')).toBe(PET_SUNSET_HTTP);
    expect(headers.get('link')).toBe('</v1/pets>; rel="successor-version"');
  };

  test('200 with the pet and the Deprecation, Sunset and Link headers', async () => {
    const response = await petstore.api('/v1/pets/2');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: 2, name: 'Max', categoryId: 2, status: 'pending' });
    expectDeprecationHeaders(response.headers);
  });

  test.each(['999999', '0', '-1', '9223372036854775807'])(
    '404 PET_NOT_FOUND for %s, with the headers',
    async (id) => {
      const response = await petstore.api(`/v1/pets/${id}`);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'PET_NOT_FOUND', status: 404 });
      expectDeprecationHeaders(response.headers);
    },
  );

  test.each(['abc', '1.5', '99999999999999999999', '9223372036854775808', '%31', '1e3', '+1'])(
    '400 INVALID_PET_ID for %s',
    async (id) => {
      const response = await petstore.api(`/v1/pets/${id}`);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'INVALID_PET_ID', status: 400 });
      expectDeprecationHeaders(response.headers);
    },
  );
});

describe('routing', () => {
  test.each(['/', '/v1', '/v1/pets/', '/v1/pets/1/extra', '/v2/pets', '/v1/store/orders', '/quickstart'])(
    '404 NOT_FOUND for %s',
    async (path) => {
      const response = await petstore.api(path);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    },
  );

  test.each([
    ['DELETE', '/v1/pets', 'GET, POST'],
    ['PUT', '/v1/pets/1', 'GET'],
    ['GET', '/quickstart/messages', 'POST'],
  ])('405 METHOD_NOT_ALLOWED for %s %s with Allow: %s', async (method, path, allow) => {
    const response = await petstore.api(path, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(response.body).toMatchObject({ code: 'METHOD_NOT_ALLOWED', status: 405 });
    // The deprecation is GET /pets/{petId}'s, not its path's: another method there carries none.
    expect(response.headers.get('deprecation')).toBeNull();
  });
});
