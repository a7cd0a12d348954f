// @tier integration

import { join } from 'node:path';
import { GraphQLID, GraphQLNonNull } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoute } from '../../src/contract/routes.ts';
import { HttpError } from '../../src/petstore/errors.ts';
import { createApiKey } from '../../src/petstore/keys.ts';
import { type Handler, parsePetId } from '../../src/petstore/routes.ts';
import { openStorage } from '../../src/petstore/storage.ts';
import { schema as publicSchema } from '../../src/schema/index.ts';
import { int64Argument } from '../../src/schema/inputs.ts';
import { fromUpstream, writeThrough } from '../../src/schema/upstream-field.ts';
import { createMemoryCache, type ResponseCache } from '../../src/stores/response-cache.ts';
import { sentence } from '../docs/claims.ts';
import { call, connectMcp } from '../mcp/client.ts';
import { startTestPetstore, TEST_KEY, type TestPetstore, tempDir } from '../petstore/helpers.ts';
import { withMutation } from '../support/extra-mutation.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';

// The walk docs/architecture.md gives for a new mutation, taken with a route the contract lacks:
// `deletePet` (DELETE /pets/{petId}, answered 204 with no body), declared here with its reference
// handler, its field and nothing else, and followed end to end: the reference service, the
// gateway, the caches of the writer and of another key, and the MCP tool.

/** The test's own route: the contract has no way to remove a pet. */
const DELETE_PET = defineRoute({
  operationId: 'deletePet',
  method: 'DELETE',
  path: '/pets/{petId}',
  // RFC 9110: a DELETE sent twice leaves the store as once (the pet is gone), so it may be resent.
  idempotent: true,
  success: { status: 204, answer: 'none' },
  changes: { lists: true, item: true },
});

/** The reference service's handler, as src/petstore/routes.ts HANDLERS would hold it. */
const removePet: Handler = ({ res, params, storage }) => {
  const id = parsePetId(params[0] ?? '');
  if (!storage.deletePet(id)) throw new HttpError('PET_NOT_FOUND', `no pet with id ${id}`);
  res.writeHead(DELETE_PET.success.status);
  res.end();
};

/**
 * `deletePet(id: ID!): ID!`: the route answers nothing, so the field answers the id it sent (in the
 * store's spelling: `"007"` removes pet 7 and answers `"7"`).
 */
const schema = withMutation(publicSchema, 'deletePet', {
  type: new GraphQLNonNull(GraphQLID),
  description: 'Removes an animal (REST `DELETE /pets/{petId}`). Answers its id.',
  args: { id: { type: new GraphQLNonNull(GraphQLID) } },
  ...fromUpstream(
    writeThrough<{ id: string }, string>(DELETE_PET, {
      request: ({ id }) => ({ params: { petId: int64Argument(id, 'id') } }),
      answer: (_none, { params }) => params?.petId ?? '',
    }),
  ),
});

const AUTH = `Bearer ${TEST_KEY}`;
/** How long an answer is cached; the cache's clock is moved past it, not waited for. */
const TTL_MS = 60_000;

let directory: ReturnType<typeof tempDir>;
let petstore: TestPetstore;
let gateway: RunningGateway;
let store: ResponseCache;
/** How far the cache's clock is ahead of the wall's. */
let skewMs = 0;
/** A second key of the same store: the same pets, and cache entries of its own. */
let otherAuth: string;
/** What the reference service was sent: `METHOD /path status`, a line a request. */
const sent: string[] = [];

beforeAll(async () => {
  directory = tempDir();
  const dbPath = join(directory.dir, 'store.db');
  const storage = openStorage(dbPath);
  otherAuth = `Bearer ${createApiKey(storage, 'other')}`;
  storage.close();
  petstore = await startTestPetstore({
    dbPath,
    routes: [{ route: DELETE_PET, handler: removePet }],
    log: (line) => sent.push(line.replace(/ [\d.]+ms$/, '')),
  });
  store = createMemoryCache({ maxEntries: 100, now: () => Date.now() + skewMs });
  gateway = await startGateway({
    upstreamUrl: petstore.url,
    cache: { store, ttlMs: TTL_MS },
    gateway: { schema },
  });
});
afterAll(async () => {
  await gateway?.close();
  await store?.close();
  await petstore?.close();
  directory?.remove();
});

const ask = async (query: string, auth = AUTH) =>
  (await post(gateway.url, { query }, { authorization: auth })).body;
const deletes = () => sent.filter((line) => line.startsWith('DELETE '));

/** A new pet of the reference store, by its id. */
async function newPet(name: string): Promise<string> {
  const created = await petstore.api('/v1/pets', { body: { name, categoryId: 1, status: 'available' } });
  return String((created.body as { id: number }).id);
}

describe('the reference service, given the route and its handler', () => {
  it('answers the DELETE 204 with no body, without the deprecation GET /pets/{petId} carries', async () => {
    const id = await newPet('Gone');
    const removed = await petstore.api(`/v1/pets/${id}`, { method: 'DELETE' });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect(removed.headers.get('deprecation')).toBeNull();
    expect(removed.headers.get('sunset')).toBeNull();

    const again = await petstore.api(`/v1/pets/${id}`, { method: 'DELETE' });
    expect(again).toMatchObject({ status: 404, body: { code: 'PET_NOT_FOUND' } });
    expect(again.headers.get('deprecation')).toBeNull();
    // The same path's GET is the deprecated route: it still says so, on its 404 too.
    const read = await petstore.api(`/v1/pets/${id}`);
    expect(read.status).toBe(404);
    expect(read.headers.get('deprecation')).not.toBeNull();
  });
});

describe('the gateway, given the field', () => {
  it('sends one DELETE and answers the id that the 204 left unsaid', async () => {
    const id = await newPet('Rex');
    sent.length = 0;
    expect(await ask(`mutation { deletePet(id: "00${id}") }`)).toEqual({ data: { deletePet: id } });
    expect(deletes()).toEqual([`DELETE /v1/pets/${id} 204`]);
    expect(await ask(`{ pet(id: "${id}") { id } }`)).toMatchObject({
      data: { pet: null },
      errors: [{ extensions: { code: 'PET_NOT_FOUND' } }],
    });
  });

  it("drops the writer's cached answer of the pet and its cached lists", async () => {
    const id = await newPet('Cached');
    const one = `{ pet(id: "${id}") { id name } }`;
    const list = '{ pets(limit: 100) { id } }';
    expect(await ask(one)).toMatchObject({ data: { pet: { id, name: 'Cached' } } });
    const listed = (await ask(list)) as { data: { pets: Array<{ id: string }> } };
    expect(listed.data.pets.map((pet) => pet.id)).toContain(id);
    sent.length = 0;
    // Cached: asked again, neither reaches the store.
    await ask(one);
    await ask(list);
    expect(sent).toEqual([]);

    await ask(`mutation { deletePet(id: "${id}") }`);
    expect(await ask(one)).toMatchObject({ data: { pet: null }, errors: [{ extensions: { status: 404 } }] });
    const after = (await ask(list)) as { data: { pets: Array<{ id: string }> } };
    expect(after.data.pets.map((pet) => pet.id)).not.toContain(id);
  });
});

describe("another key's cached answers", () => {
  it('keep a pet the writer removed until their TTL ends, as docs/redis.md says', async () => {
    expect(sentence('docs/redis.md', "Other keys' entries are left")).toContain('`RESPONSE_CACHE_TTL_MS`');
    const id = await newPet('Shared');
    const one = `{ pet(id: "${id}") { id } }`;
    const listed = async () => {
      const answer = (await ask('{ pets(limit: 100) { id } }', otherAuth)) as {
        data: { pets: Array<{ id: string }> };
      };
      return answer.data.pets.map((pet) => pet.id);
    };
    expect(await ask(one, otherAuth)).toMatchObject({ data: { pet: { id } } });
    expect(await listed()).toContain(id);

    await ask(`mutation { deletePet(id: "${id}") }`);
    // Entries are named per caller, and a write drops only its own caller's.
    expect(await ask(one, otherAuth)).toMatchObject({ data: { pet: { id } } });
    expect(await listed()).toContain(id);
    skewMs += TTL_MS;
    expect(await ask(one, otherAuth)).toMatchObject({
      data: { pet: null },
      errors: [{ extensions: { status: 404 } }],
    });
    expect(await listed()).not.toContain(id);
  });
});

describe('sent again as its route declares', () => {
  it('is retried after a 503, being idempotent, and answered', async () => {
    const upstream = await startFakeUpstream();
    upstream.tokens.add('k');
    upstream.seed('k', { id: '7', name: 'Rex', categoryId: '1' });
    upstream.serve(DELETE_PET, ({ params, pets }) => {
      const index = pets.findIndex((pet) => pet.id === params.petId);
      if (index === -1) return { status: 404 };
      pets.splice(index, 1);
      return { status: 204 };
    });
    upstream.fault(
      /^\/v1\/pets\/7$/,
      (_req, res) => {
        res.writeHead(503);
        res.end();
      },
      1,
    );
    const retrying = await startGateway({
      upstreamUrl: upstream.url,
      client: { retryBaseMs: 1 },
      gateway: { schema },
    });
    try {
      const answer = await post(
        retrying.url,
        { query: 'mutation { deletePet(id: "7") }' },
        { authorization: 'Bearer k' },
      );
      expect(answer.body).toEqual({ data: { deletePet: '7' } });
      // A write that is not idempotent goes out once (test/upstream/writes.test.ts): the flag decides.
      const sentTwice = upstream.requests.filter((request) => request.method === 'DELETE');
      expect(sentTwice.map((request) => request.path)).toEqual(['/v1/pets/7', '/v1/pets/7']);
    } finally {
      await retrying.close();
      await upstream.close();
    }
  });
});

describe("the field's MCP tool, made from its declaration", () => {
  it('is destructive and idempotent as its route says, and tells a model it may be sent again', async () => {
    const assistant = await connectMcp(gateway.origin, TEST_KEY);
    try {
      const tool = (await assistant.listTools()).tools.find((each) => each.name === 'delete_pet');
      expect(tool?.inputSchema).toMatchObject({ properties: { id: { type: 'string' } }, required: ['id'] });
      expect(tool?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
      });
      expect(tool?.description).not.toMatch(/never retried/);
      expect(tool?.description).toMatch(/sent again after a failure.*: ask the user before calling it\.$/);

      const id = await newPet('ByTool');
      sent.length = 0;
      const result = await call(assistant, 'delete_pet', { id });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ deletePet: id });
      expect(deletes()).toEqual([`DELETE /v1/pets/${id} 204`]);
    } finally {
      await assistant.close();
    }
  });
});
