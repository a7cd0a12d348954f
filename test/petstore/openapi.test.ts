// @tier integration

import { request } from 'node:http';
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ERRORS } from '../../src/contract/errors.ts';
import {
  createResponseValidator,
  loadOpenApi,
  OPENAPI_PATH,
  startTestPetstore,
  type TestPetstore,
} from './helpers.ts';

const doc = loadOpenApi();

describe('schema/openapi.yaml', () => {
  test('is a valid OpenAPI 3.1 document', async () => {
    const result = await validate(OPENAPI_PATH);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
    expect(doc.openapi).toBe('3.1.0');
  });

  test('states the contract: servers ending in /v1, global bearer auth, limit bounds, int64, the deprecation', () => {
    const servers = doc.servers as { url: string }[];
    expect(servers.length).toBeGreaterThanOrEqual(2);
    for (const server of servers) expect(server.url).toMatch(/\{[a-z_]+\}.*\/v1$/);
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const components = doc.components as Record<string, Record<string, Record<string, unknown>>>;
    expect(components.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });

    const list = doc.paths['/pets']?.get as unknown as { parameters: { name: string; schema: unknown }[] };
    expect(list.parameters.find((p) => p.name === 'limit')?.schema).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 20,
    });
    const schemas = components.schemas as Record<
      string,
      { properties?: Record<string, unknown>; required?: string[] }
    >;
    expect(schemas.PetStatus).toMatchObject({ enum: ['available', 'pending', 'sold'] });
    expect(schemas.Pet?.properties?.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(schemas.NewPet?.properties?.categoryId).toMatchObject({ type: 'integer', format: 'int64' });
    expect(schemas.NewPet?.required).toEqual(['name', 'categoryId']);
    expect(schemas.Error?.required).toEqual(['code', 'message', 'status']);

    const getPet = doc.paths['/pets/{petId}']?.get as unknown as Record<string, unknown>;
    expect(getPet).toMatchObject({ operationId: 'getPet', deprecated: true, 'x-sunset': '2030-12-05' });
    expect(getPet.description).toContain('2030-12-05');
  });

  test('documents every error code the service can answer', () => {
    const description = (doc.info as { description: string }).description;
    for (const [code, status] of Object.entries(ERRORS))
      expect(description).toContain(`| ${status} | ${code} |`);
  });
});

describe('responses match schema/openapi.yaml', () => {
  let petstore: TestPetstore;
  const check = createResponseValidator();
  beforeAll(async () => {
    petstore = await startTestPetstore();
  });
  afterAll(() => petstore.close());

  test('listPets: 200 (plain, filtered, with an id beyond 2^53 absent), 400, 401', async () => {
    check('/pets', 'get', await petstore.api('/v1/pets'));
    check('/pets', 'get', await petstore.api('/v1/pets?status=pending&limit=100'));
    check('/pets', 'get', await petstore.api('/v1/pets?limit=0'));
    check('/pets', 'get', await petstore.api('/v1/pets?status=x'));
    check('/pets', 'get', await petstore.api('/v1/pets', { auth: null }));
  });

  test('createPet: 201 (with and without status, int64 extremes), 400, 401, 413', async () => {
    check(
      '/pets',
      'post',
      await petstore.api('/v1/pets', { body: { name: 'A', categoryId: 1, status: 'sold' } }),
    );
    const created = await petstore.api('/v1/pets', { body: '{"name":"B","categoryId":9223372036854775807}' });
    expect(created.status).toBe(201);
    check('/pets', 'post', created);
    check('/pets', 'post', await petstore.api('/v1/pets', { body: '{"name":"C"}' }));
    check('/pets', 'post', await petstore.api('/v1/pets', { body: 'nope' }));
    check('/pets', 'post', await petstore.api('/v1/pets', { body: {}, auth: 'Bearer x' }));
    const tooLarge = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const req = request(`${petstore.url}/pets`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer test-key',
          'content-type': 'application/json',
          'content-length': 2 ** 21,
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(tooLarge.status).toBe(413);
    check('/pets', 'post', tooLarge);
  });

  test('getPet: 200, 400, 401, 404', async () => {
    check('/pets/{petId}', 'get', await petstore.api('/v1/pets/1'));
    check('/pets/{petId}', 'get', await petstore.api('/v1/pets/abc'));
    check('/pets/{petId}', 'get', await petstore.api('/v1/pets/1', { auth: null }));
    check('/pets/{petId}', 'get', await petstore.api('/v1/pets/424242'));
  });

  test('quickstart messages: 202, 400, 401', async () => {
    check('/messages', 'post', await petstore.api('/quickstart/messages', { body: { message: 'hi' } }));
    check('/messages', 'post', await petstore.api('/quickstart/messages', { body: {} }));
    check(
      '/messages',
      'post',
      await petstore.api('/quickstart/messages', { body: { message: 'hi' }, auth: null }),
    );
  });

  test('the validator does reject a response that breaks the schema', () => {
    expect(() => check('/pets', 'get', { status: 200, body: [{ id: 1, name: 'x' }] })).toThrow(/categoryId/);
    expect(() => check('/pets', 'get', { status: 401, body: { code: 'X', status: 401 } })).toThrow(/message/);
  });
});
