// @tier unit

import { describe, expect, it } from 'vitest';
import {
  type ContractRoute,
  defineRoute,
  pathOf,
  pathParameters,
  pathPattern,
  ROUTES,
} from '../../src/contract/routes.ts';
import { loadOpenApi } from '../petstore/helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed YAML document, walked by the paths the contract names
const doc = loadOpenApi() as any;

/** Every operation of the document's pet paths (the quickstart's is not the contract's). */
const operations = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>)
  .filter(([path]) => path.startsWith('/pets'))
  .flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  );

describe('src/contract/routes.ts against schema/openapi.yaml', () => {
  it('one route per operation of the document, by operationId, with its method and path', () => {
    expect(Object.keys(ROUTES).sort()).toEqual(operations.map((entry) => entry.operation.operationId).sort());
    for (const { path, method, operation } of operations) {
      const route = ROUTES[operation.operationId as keyof typeof ROUTES];
      expect(route).toMatchObject({ operationId: operation.operationId, method, path });
      expect(route.name).toBe(`${method} ${path}`);
    }
  });

  it("each route's success status, answer and body are the document's", () => {
    for (const route of Object.values(ROUTES) as ContractRoute[]) {
      const operation = doc.paths[route.path][route.method.toLowerCase()];
      const successes = Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status));
      expect(successes).toEqual([String(route.success.status)]);
      // A route that answers nothing (a 204) has no content in the document.
      const content = operation.responses[successes[0] as string].content;
      if (route.success.answer === 'none') expect(content).toBeUndefined();
      else
        expect(content['application/json'].schema.$ref).toBe(`#/components/schemas/${route.success.answer}`);
      const body = operation.requestBody?.content['application/json'].schema.$ref;
      expect(body).toBe(route.body === undefined ? undefined : `#/components/schemas/${route.body}`);
      expect(route.deprecated ?? false).toBe(operation.deprecated ?? false);
    }
  });

  it('each route is idempotent as RFC 9110 says of its method, and every write declares what it changes', () => {
    // Retries and shared calls follow the declaration (upstream/retry.ts, client.ts); a DELETE or
    // PUT may be idempotent, a POST or PATCH never.
    const idempotentMethods = new Set(['GET', 'PUT', 'DELETE']);
    for (const route of Object.values(ROUTES) as ContractRoute[]) {
      if (!idempotentMethods.has(route.method)) expect(route.idempotent, route.name).toBe(false);
      expect('changes' in route, route.name).toBe(route.method !== 'GET');
    }
  });
});

describe('paths from a route', () => {
  const byId = ROUTES.getPet;

  it('fills and encodes its parameters, and refuses a missing one', () => {
    expect(pathOf(byId, { petId: '9223372036854775807' })).toBe('/pets/9223372036854775807');
    expect(pathOf(byId, { petId: '1/../x' })).toBe('/pets/1%2F..%2Fx');
    expect(() => pathOf(byId)).toThrow('GET /pets/{petId} needs its {petId}');
    expect(pathOf(ROUTES.listPets)).toBe('/pets');
  });

  it('matches a raw path one segment per parameter, under a prefix', () => {
    const pattern = pathPattern(byId, '/v1');
    expect(pattern.exec('/v1/pets/42')?.slice(1)).toEqual(['42']);
    expect(pattern.test('/v1/pets/42/x')).toBe(false);
    expect(pattern.test('/v1/pets')).toBe(false);
    expect(pattern.test('/v1xpets/1')).toBe(false);
    expect(pathParameters(byId)).toEqual(['petId']);
  });

  it('names a route from its method and path', () => {
    const remove = defineRoute({
      operationId: 'deletePet',
      method: 'DELETE',
      path: '/pets/{petId}',
      idempotent: false,
      success: { status: 204, answer: 'none' },
      changes: { lists: true, item: true },
    });
    expect(remove.name).toBe('DELETE /pets/{petId}');
    expect(Object.isFrozen(remove)).toBe(true);
  });
});
