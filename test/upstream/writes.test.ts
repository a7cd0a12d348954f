// @tier integration

import { type GraphQLEnumType, GraphQLID, GraphQLNonNull, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PetStatus as PetStatusValue } from '../../src/contract/animal-store.ts';
import { defineRoute } from '../../src/contract/routes.ts';
import { operationsAsTools } from '../../src/mcp/operations-as-tools.ts';
import { annotationsOf } from '../../src/mcp/tool.ts';
import { schema as publicSchema } from '../../src/schema/index.ts';
import { int64Argument } from '../../src/schema/inputs.ts';
import { fromUpstream, writeThrough } from '../../src/schema/upstream-field.ts';
import { createMemoryCache, type ResponseCache } from '../../src/stores/response-cache.ts';
import type { PetDto } from '../../src/upstream/bodies.ts';
import { call, connectMcp } from '../mcp/client.ts';
import { withMutation } from '../support/extra-mutation.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';
import { type SseSubscription, subscribeSse } from '../support/sse.ts';

// One write path (src/upstream/loaders.ts `write`): a mutation declares its route, and what the
// route changes decides what follows: sent once, this caller's cached lists and the named pet's
// cached answer dropped, live lists asked again, and an MCP tool offered to assistants. Shown with a
// mutation the schema does not have, added here with nothing but its route's declaration and its
// field's: no edit anywhere else.

/** A route of this test's own: the contract has no way to change a pet's status. */
const SET_STATUS = defineRoute({
  operationId: 'setPetStatus',
  method: 'PATCH',
  path: '/pets/{petId}',
  idempotent: false,
  body: 'NewPet',
  success: { status: 200, answer: 'Pet' },
  changes: { lists: true, item: true },
});

/**
 * The public schema with one more mutation field, `setPetStatus(id:, status:)`: its declaration and
 * its type, nothing else.
 */
const schema = withMutation(publicSchema, 'setPetStatus', {
  type: new GraphQLNonNull(publicSchema.getType('Pet') as GraphQLObjectType),
  args: {
    id: { type: new GraphQLNonNull(GraphQLID) },
    status: { type: new GraphQLNonNull(publicSchema.getType('PetStatus') as GraphQLEnumType) },
  },
  ...fromUpstream(
    writeThrough<{ id: string; status: string }, PetDto>(SET_STATUS, {
      request: ({ id, status }) => ({
        params: { petId: int64Argument(id, 'id') },
        // The body schema the route names; only `status` is read by this test's upstream.
        body: { name: '', categoryId: '0', status: status as PetStatusValue },
      }),
    }),
  ),
});

const KEY = 'writes-key';
const AUTH = `Bearer ${KEY}`;
const SET_SOLD = 'mutation { setPetStatus(id: "7", status: SOLD) { id status } }';
const LIST = '{ pets { id status } }';
const ONE = '{ pet(id: "7") { id status } }';

let upstream: FakeUpstream;
let gateway: RunningGateway;
let store: ResponseCache;
const open: SseSubscription[] = [];

const ask = async (query: string) => (await post(gateway.url, { query }, { authorization: AUTH })).body;
const patches = () => upstream.requests.filter((request) => request.method === 'PATCH');

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(KEY);
  upstream.seed(KEY, { id: '7', name: 'Rex', categoryId: '1', status: 'available' });
  upstream.serve(SET_STATUS, ({ params, body, pets }) => {
    const pet = pets.find((candidate) => candidate.id === params.petId);
    if (pet === undefined) return { status: 404 };
    pet.status = (JSON.parse(body) as { status: string }).status;
    return { status: 200, pet };
  });
  store = createMemoryCache({ maxEntries: 100 });
  gateway = await startGateway({
    upstreamUrl: upstream.url,
    cache: { store, ttlMs: 60_000 },
    // Polls far apart: a live list that sees the change within the test saw it because it was told.
    config: {
      live: { pollMs: 60_000, maxPerKey: 10, maxStreams: 100, slowReaderMs: 30_000, store: 'memory' },
    },
    gateway: { schema },
  });
});
afterAll(async () => {
  for (const subscription of open) subscription.close();
  await gateway.close();
  await store.close();
  await upstream.close();
});

describe('a mutation declared by its route and its field alone', () => {
  it('goes out as its route says, and once, even when the upstream fails', async () => {
    upstream.fault(
      /^\/v1\/pets\/7$/,
      (_req, res) => {
        res.writeHead(503);
        res.end();
      },
      1,
    );
    const refused = (await ask(SET_SOLD)) as { errors?: Array<{ extensions?: { code?: string } }> };
    expect(refused.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(patches().map((request) => request.path)).toEqual(['/v1/pets/7']);
    upstream.requests.length = 0;
  });

  it("drops the caller's cached list and the pet's cached answer, and wakes the caller's live list", async () => {
    expect(await ask(LIST)).toEqual({ data: { pets: [{ id: '7', status: 'AVAILABLE' }] } });
    expect(await ask(ONE)).toMatchObject({ data: { pet: { id: '7', status: 'AVAILABLE' } } });
    const live = await subscribeSse(gateway.url, { query: `subscription ${LIST}` }, AUTH);
    open.push(live);
    await live.waitForEvents(1);
    const reads = upstream.requests.filter((request) => request.method === 'GET').length;
    // Cached: asked again, neither reaches the upstream.
    await ask(LIST);
    await ask(ONE);
    expect(upstream.requests.filter((request) => request.method === 'GET')).toHaveLength(reads);

    expect(await ask(SET_SOLD)).toEqual({ data: { setPetStatus: { id: '7', status: 'SOLD' } } });
    expect(patches()).toHaveLength(1);
    expect(await ask(LIST)).toEqual({ data: { pets: [{ id: '7', status: 'SOLD' }] } });
    expect(await ask(ONE)).toMatchObject({ data: { pet: { id: '7', status: 'SOLD' } } });
    await live.waitForEvents(2, 5_000);
    expect(live.events[1]?.data).toEqual({ pets: [{ id: '7', status: 'SOLD' }] });
  });
});

describe("the mutation's MCP tool, made from its declaration", () => {
  it("is offered as set_pet_status with the field's arguments, a write a client asks before", async () => {
    const assistant = await connectMcp(gateway.origin, KEY);
    try {
      const tool = (await assistant.listTools()).tools.find((each) => each.name === 'set_pet_status');
      expect(tool?.inputSchema).toMatchObject({
        properties: { id: { type: 'string' }, status: { enum: ['AVAILABLE', 'PENDING', 'SOLD'] } },
        required: ['id', 'status'],
        additionalProperties: false,
      });
      expect(Object.keys(tool?.inputSchema.properties ?? {}).sort()).toEqual(['id', 'status']);
      // It changes a pet that exists (the route's `changes.item`): destructive, as MCP means it.
      expect(tool?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
      });
      expect(tool?.description).toMatch(/sent once, never retried: ask the user before calling it\.$/);
    } finally {
      await assistant.close();
    }
  });

  it('makes a manifest operation that sets a status destructive too, and one that only adds not', () => {
    const manifest = new Map([
      ['sha256:sold', 'mutation SoldOut($id: ID!) { setPetStatus(id: $id, status: SOLD) { id } }'],
      ['sha256:add', 'mutation Add($input: NewPet!) { createPet(input: $input) { id } }'],
    ]);
    const hints = operationsAsTools(manifest, schema).map((tool) => [tool.name, annotationsOf(tool)]);
    expect(Object.fromEntries(hints)).toMatchObject({
      sold_out: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      add: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    });
  });

  it('goes out as one PATCH and answers the pet', async () => {
    const assistant = await connectMcp(gateway.origin, KEY);
    try {
      upstream.requests.length = 0;
      const result = await call(assistant, 'set_pet_status', { id: '7', status: 'PENDING' });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({
        setPetStatus: { id: '7', name: 'Rex', categoryId: '1', status: 'PENDING' },
      });
      expect(patches().map((request) => [request.path, JSON.parse(request.body).status])).toEqual([
        ['/v1/pets/7', 'pending'],
      ]);
    } finally {
      await assistant.close();
    }
  });
});
