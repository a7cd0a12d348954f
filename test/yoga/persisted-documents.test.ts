// @tier integration

import { GraphQLClient } from 'graphql-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPersistedDocuments } from '../../src/yoga/request/persisted-documents.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { postJson } from '../support/graphql.ts';
import { CreatePet, ListPets } from '../support/operations.ts';

const MANIFEST = new URL('../generated/persisted-documents.json', import.meta.url).pathname;
const AUTH = 'Bearer persisted-token';

let upstream: FakeUpstream;
const gateways = {} as Record<'allow' | 'require', RunningGateway>;

function start(mode: 'allow' | 'require') {
  return startGateway({
    upstreamUrl: upstream.url,
    gateway: { persistedOperations: { mode, documents: loadPersistedDocuments(MANIFEST) } },
  });
}

/** The id codegen gave a document (client preset, persistedDocuments). */
function idOf(document: unknown): string {
  return (document as { __meta__: { hash: string } }).__meta__.hash;
}

/**
 * A real client sending ids instead of documents, as a shipped mobile app would: graphql-request
 * with a middleware that swaps the document text for its id.
 */
function persistedClient(url: string) {
  return new GraphQLClient(url, {
    headers: { authorization: AUTH },
    requestMiddleware: (request) => {
      const body = JSON.parse(String(request.body));
      const id = persistedIds.get(body.query);
      return { ...request, body: JSON.stringify({ documentId: id, variables: body.variables }) };
    },
  });
}
const persistedIds = new Map<string, string>();

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add('persisted-token');
  gateways.allow = await start('allow');
  gateways.require = await start('require');
  const { print } = await import('graphql');
  for (const document of [ListPets, CreatePet]) persistedIds.set(print(document), idOf(document));
});

afterAll(async () => {
  await gateways.allow.close();
  await gateways.require.close();
  await upstream.close();
});

describe('trusted (persisted) operations', () => {
  it('the manifest codegen writes holds every test operation, by sha256 id', () => {
    const documents = loadPersistedDocuments(MANIFEST);
    expect(documents.get(idOf(ListPets))).toContain('query ListPets');
    expect(idOf(ListPets)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it.each(['allow', 'require'] as const)(
    '%s: a real client sending only ids runs the mutation and a query',
    async (mode) => {
      const client = persistedClient(gateways[mode].url);
      const { createPet } = await client.request(CreatePet, {
        input: { name: `by-id-${mode}`, categoryId: '3' },
      });
      expect(createPet.name).toBe(`by-id-${mode}`);
      const { pets } = await client.request(ListPets, { limit: 100 });
      expect(pets.map((pet) => pet.name)).toContain(`by-id-${mode}`);
    },
  );

  it('accepts the APQ-style extensions.persistedQuery.sha256Hash too', async () => {
    const hash = idOf(ListPets).replace(/^sha256:/, '');
    const result = await postJson(
      gateways.require.url,
      { extensions: { persistedQuery: { version: 1, sha256Hash: hash } }, variables: { limit: 1 } },
      AUTH,
    );
    expect(result.errors, result.text).toBeUndefined();
  });

  it('require: refuses any document text, even a valid one, with PERSISTED_OPERATION_REQUIRED', async () => {
    const result = await postJson(gateways.require.url, { query: '{ pets { id } }' }, AUTH);
    expect(result.status).toBe(403);
    expect(result.errors?.[0]?.extensions?.code).toBe('PERSISTED_OPERATION_REQUIRED');
  });

  it('allow: still runs document text', async () => {
    const result = await postJson(gateways.allow.url, { query: '{ pets(limit: 1) { id } }' }, AUTH);
    expect(result.errors).toBeUndefined();
  });

  it.each(['allow', 'require'] as const)(
    '%s: an unknown id is PERSISTED_QUERY_NOT_FOUND, with no upstream call',
    async (mode) => {
      upstream.requests.length = 0;
      const result = await postJson(gateways[mode].url, { documentId: `sha256:${'0'.repeat(64)}` }, AUTH);
      expect(result.status).toBe(404);
      expect(result.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(upstream.requests).toEqual([]);
    },
  );

  it('require: a documentId beside document text is refused, and the message says to drop the text', async () => {
    const result = await postJson(
      gateways.require.url,
      { documentId: idOf(ListPets), query: '{ pets { id } }' },
      AUTH,
    );
    expect(result.status).toBe(403);
    expect(result.errors?.[0]).toMatchObject({
      message: 'This gateway runs only persisted operations: send the documentId without the query text.',
      extensions: { code: 'PERSISTED_OPERATION_REQUIRED' },
    });
  });

  it('require: a request with neither asks for a documentId', async () => {
    const result = await postJson(gateways.require.url, { variables: {} }, AUTH);
    expect(result.status).toBe(403);
    expect(result.errors?.[0]?.message).toBe(
      'This gateway runs only persisted operations: send a documentId.',
    );
  });

  describe('over GET (GraphQL-over-HTTP: queries only)', () => {
    const get = async (url: string, params: Record<string, string>) => {
      const response = await fetch(`${url}?${new URLSearchParams(params)}`, {
        headers: { authorization: AUTH, accept: 'application/graphql-response+json' },
      });
      return { status: response.status, body: await response.json() };
    };

    it.each(['allow', 'require'] as const)('%s: ?documentId= runs the persisted query', async (mode) => {
      const result = await get(gateways[mode].url, {
        documentId: idOf(ListPets),
        variables: JSON.stringify({ limit: 1 }),
      });
      expect(result.body.errors).toBeUndefined();
      expect(result.status).toBe(200);
      expect(result.body.data.pets).toHaveLength(1);
    });

    it('require: the APQ extensions parameter works too', async () => {
      const hash = idOf(ListPets).replace(/^sha256:/, '');
      const result = await get(gateways.require.url, {
        extensions: JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hash } }),
      });
      expect(result.body.errors).toBeUndefined();
    });

    it('require: a persisted mutation is refused over GET (405) and never sent upstream', async () => {
      upstream.requests.length = 0;
      const result = await get(gateways.require.url, {
        documentId: idOf(CreatePet),
        variables: JSON.stringify({ input: { name: 'by-get', categoryId: '1' } }),
      });
      expect(result.status).toBe(405);
      expect(upstream.requests).toEqual([]);
    });
  });

  it('refuses a manifest that is not an id → document object', () => {
    expect(() => loadPersistedDocuments('/nonexistent.json')).toThrowError(
      /cannot read persisted operations/,
    );
  });
});
