// @tier integration

import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { GET_PET_DEPRECATED, PET_SUNSET, PET_SUNSET_HTTP } from '../../src/contract/animal-store.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { BIG_ID, type FakeUpstream, seedPets, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { postJson, post as postTo } from '../support/graphql.ts';

// Our gateway as a Federation v2 subgraph, spoken to as a router speaks to it: `_service` for
// composition, `_entities` for key lookups. supergraph.test.ts runs a real router in front of it.

const TOKEN = 'federation-token';
const AUTH = `Bearer ${TOKEN}`;
/** What Hive Gateway and Apollo Router send for an entity fetch (bar the operation name). */
const ENTITIES = `query Entities($representations: [_Any!]!) {
  _entities(representations: $representations) { __typename ... on Pet { id name categoryId status } }
}`;

const pets = (...ids: Array<string | number>) => ids.map((id) => ({ __typename: 'Pet', id }));

let upstream: FakeUpstream;
let gateway: RunningGateway;
let clock = new Date('2026-11-22T12:00:00Z');
const deprecatedUses: unknown[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  seedPets(upstream, TOKEN);
  const logger = createLogger('info', {
    write: (line: string) => {
      const event = JSON.parse(line);
      if (event.msg === 'deprecated field used') deprecatedUses.push(event);
    },
  });
  gateway = await startGateway({
    upstreamUrl: upstream.url,
    // Room for a 10,000-representation body, so the limits below are what refuses it.
    limits: { ...DEFAULT_LIMITS, maxBodyBytes: 1024 * 1024 },
    gateway: { federation: true, logger, now: () => clock },
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

afterEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
  deprecatedUses.length = 0;
  clock = new Date('2026-11-22T12:00:00Z');
});

/** Posts as a router does; `null` sends no Authorization header. */
const post = (body: unknown, authorization: string | null = AUTH) =>
  postTo(gateway.url, body, { authorization: authorization ?? undefined });

const petCalls = () => upstream.requests.filter((request) => request.path.startsWith('/v1/pets/'));

describe('the subgraph schema', () => {
  it('answers _service { sdl } with the committed schema/subgraph.graphql, without a key', async () => {
    const committed = readFileSync(new URL('../../schema/subgraph.graphql', import.meta.url), 'utf8');
    const { body } = await post({ query: '{ _service { sdl } }' }, null);
    expect(`${body.data._service.sdl}\n`).toBe(committed);
    expect(committed).toContain('type Pet\n  @key(fields: "id")');
    expect(upstream.requests).toEqual([]);
  });

  it('keeps the public fields: pets and pet(id) answer as without federation', async () => {
    const { body } = await post({ query: '{ pets(limit: 1) { id name } }' });
    expect(body).toEqual({ data: { pets: [{ id: BIG_ID, name: 'Rex' }] } });
  });
});

describe('_entities', () => {
  it('resolves Pet references in order, one upstream call per distinct id, int64 ids exact', async () => {
    const { status, body } = await post({
      query: ENTITIES,
      variables: { representations: pets(BIG_ID, '2', BIG_ID, '404', '3', 2) },
    });
    expect(status).toBe(200);
    const rex = {
      __typename: 'Pet',
      id: BIG_ID,
      name: 'Rex',
      categoryId: '9223372036854775807',
      status: 'AVAILABLE',
    };
    const tom = { __typename: 'Pet', id: '2', name: 'Tom', categoryId: '1', status: 'SOLD' };
    const nemo = { __typename: 'Pet', id: '3', name: 'Nemo', categoryId: '1', status: null };
    expect(body.data).toEqual({ _entities: [rex, tom, rex, null, nemo, tom] });
    // The unknown id is null with the upstream's own error, at its own index.
    expect(body.errors).toEqual([
      {
        message: 'No pet with id 404.',
        path: ['_entities', 3],
        locations: expect.any(Array),
        extensions: { code: 'PET_NOT_FOUND', status: 404 },
      },
    ]);
    expect(
      petCalls()
        .map((request) => request.path)
        .sort(),
    ).toEqual(['/v1/pets/2', '/v1/pets/3', '/v1/pets/404', `/v1/pets/${BIG_ID}`]);
    expect(petCalls().every((request) => request.authorization === AUTH)).toBe(true);
  });

  it('shares pet(id)’s loader: the same id asked both ways is one upstream call', async () => {
    const { body } = await post({
      query: `query Both($representations: [_Any!]!) {
        _entities(representations: $representations) { ... on Pet { name } }
        pet(id: "2") { name }
      }`,
      variables: { representations: pets('2', BIG_ID, '2') },
    });
    expect(body.data).toEqual({
      _entities: [{ name: 'Tom' }, { name: 'Rex' }, { name: 'Tom' }],
      pet: { name: 'Tom' },
    });
    expect(
      petCalls()
        .map((request) => request.path)
        .sort(),
    ).toEqual(['/v1/pets/2', `/v1/pets/${BIG_ID}`]);
  });

  it('is served by both lanes with the same bytes when a router repeats its fetch', async () => {
    const lanes = gateway.lanes;
    if (!lanes) throw new Error('the fast lane is off');
    const fastBefore = lanes.served.fast;
    const request = { query: ENTITIES, variables: { representations: pets('3', BIG_ID) } };
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push((await post(request)).text);
    expect(new Set(answers).size).toBe(1);
    expect(lanes.served.fast - fastBefore).toBeGreaterThanOrEqual(2);
    expect(petCalls()).toHaveLength(10);
  });

  it('requires the caller’s key like any other field: none, and no upstream call', async () => {
    const { body } = await post({ query: ENTITIES, variables: { representations: pets('2', '3') } }, null);
    expect(body.data).toEqual({ _entities: [null, null] });
    expect(body.errors.map((error: { extensions: unknown }) => error.extensions)).toEqual([
      { code: 'UNAUTHENTICATED', status: 401 },
      { code: 'UNAUTHENTICATED', status: 401 },
    ]);
    expect(upstream.requests).toEqual([]);
    const wrongKey = await post(
      { query: ENTITIES, variables: { representations: pets('2') } },
      'Bearer nope',
    );
    expect(wrongKey.body.errors[0].extensions).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
    expect(upstream.requests.map((request) => request.authorization)).toEqual(['Bearer nope']);
  });

  it('refuses an id that is not an int64 in its own entity, and a foreign __typename whole', async () => {
    const { body } = await post({
      query: ENTITIES,
      // A JSON number above 2^53 was rounded before the gateway saw it: refused, not looked up.
      // "003" is read as arguments are (pet 3), and shares pet 3's one call.
      variables: { representations: pets('2', 'abc', 2 ** 53 + 2, '003', 3) },
    });
    expect(body.data._entities.map((pet: { id: string } | null) => pet?.id ?? null)).toEqual([
      '2',
      null,
      null,
      '3',
      '3',
    ]);
    expect(body.errors.map((error: { path: unknown[] }) => error.path)).toEqual([
      ['_entities', 1],
      ['_entities', 2],
    ]);
    for (const error of body.errors) {
      expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'representations' });
    }
    expect(
      petCalls()
        .map((request) => request.path)
        .sort(),
    ).toEqual(['/v1/pets/2', '/v1/pets/3']);

    upstream.requests.length = 0;
    const foreign = await post({
      query: ENTITIES,
      variables: { representations: [{ __typename: 'Query', id: '1' }, 'Pet'] },
    });
    expect(foreign.body.data).toBeNull();
    expect(foreign.body.errors[0].extensions).toEqual({
      code: 'BAD_USER_INPUT',
      argument: 'representations',
    });
    expect(upstream.requests).toEqual([]);
  });
});

describe('limits on _entities', () => {
  it('refuses more than MAX_REPRESENTATIONS before any upstream call', async () => {
    const { status, body } = await post({
      query: ENTITIES,
      variables: { representations: pets(...Array.from({ length: 101 }, (_, i) => String(i))) },
    });
    expect(status).toBe(400);
    expect(body.data).toBeNull();
    expect(body.errors[0].extensions).toEqual({
      code: 'REPRESENTATIONS_LIMIT_EXCEEDED',
      count: 101,
      limit: 100,
    });
    expect(upstream.requests).toEqual([]);
  });

  it('a single request with 10,000 representations makes no upstream call, as variables or inline', async () => {
    const many = pets(...Array.from({ length: 10_000 }, (_, i) => String(i + 1)));
    const asVariables = await post({ query: ENTITIES, variables: { representations: many } });
    expect(asVariables.body.errors[0].extensions.code).toBe('REPRESENTATIONS_LIMIT_EXCEEDED');
    const inline = many.map(({ id }) => `{__typename: "Pet", id: "${id}"}`).join(',');
    const asLiteral = await post({
      query: `{ _entities(representations: [${inline}]) { ... on Pet { id } } }`,
    });
    // A document this long is over the token limit before it is even validated.
    expect(asLiteral.status).toBe(400);
    expect(asLiteral.body.errors[0].extensions.code).toBe('TOKEN_LIMIT_EXCEEDED');
    expect(upstream.requests).toEqual([]);
  });

  it('prices each representation like a list item: over MAX_COST is refused before any upstream call', async () => {
    const generous = await startGateway({
      upstreamUrl: upstream.url,
      limits: { ...DEFAULT_LIMITS, maxBodyBytes: 1024 * 1024, maxRepresentations: 10_000 },
      gateway: { federation: true, logger: createLogger('silent') },
    });
    try {
      const many = pets(...Array.from({ length: 10_000 }, (_, i) => String(i + 1)));
      const response = await fetch(generous.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body: JSON.stringify({ query: ENTITIES, variables: { representations: many } }),
      });
      const body = await response.json();
      expect(response.status).toBe(400);
      // Per representation: the entity 1, and id, name, categoryId, status 1 each (__typename 0).
      expect(body.errors[0].extensions).toEqual({ code: 'COST_LIMIT_EXCEEDED', cost: 50_000, limit: 1000 });
      // Within the cost, the same document runs.
      const few = await postJson(
        generous.url,
        { query: ENTITIES, variables: { representations: pets('2') } },
        AUTH,
      );
      expect(few.errors).toBeUndefined();
      expect(upstream.requests.map((request) => request.path)).toEqual(['/v1/pets/2']);
    } finally {
      await generous.close();
    }
  });

  it('prices _entities beside other root fields too: the oversized operation makes no call at all', async () => {
    const { body } = await post({
      query: `query Mixed($representations: [_Any!]!) {
        pets(limit: 5) { id }
        _entities(representations: $representations) { ... on Pet { id name } }
      }`,
      variables: { representations: pets(...Array.from({ length: 101 }, (_, i) => String(i))) },
    });
    expect(body.data).toBeNull();
    expect(
      new Set(body.errors.map((error: { extensions: { code: string } }) => error.extensions.code)),
    ).toEqual(new Set(['REPRESENTATIONS_LIMIT_EXCEEDED']));
    const costly = `query Costly($representations: [_Any!]!, $status: PetStatus) {
      pets(limit: 100, status: $status) { id name categoryId status }
      more: pets(limit: 100) { id }
      _entities(representations: $representations) { __typename ... on Pet { id name categoryId status } }
    }`;
    const hundred = pets(...Array.from({ length: 100 }, (_, i) => String(i)));
    const refused = await post({ query: costly, variables: { representations: hundred, status: 'SOLD' } });
    // 500 + 200 + 500, refused before any root field calls the upstream.
    expect(refused.status).toBe(400);
    expect(refused.body.data).toBeNull();
    expect(refused.body.errors.map((error: { extensions: unknown }) => error.extensions)).toEqual([
      { code: 'COST_LIMIT_EXCEEDED', cost: 1200, limit: 1000 },
    ]);
    expect(upstream.requests).toEqual([]);
    // One alias less (1000) is within the cost: `_entities` prices the operation from the caller's own
    // variables (an enum among them) and runs.
    const within = await post({
      query: costly.replace('more: pets(limit: 100) { id }', ''),
      variables: { representations: pets('2'), status: 'SOLD' },
    });
    expect(within.body.errors).toBeUndefined();
    expect(within.body.data._entities).toEqual([expect.objectContaining({ id: '2', name: 'Tom' })]);
  });
});

describe('deprecation signals on entity resolution', () => {
  const deprecatedUpstream = () =>
    upstream.fault(/^\/v1\/pets\/2$/, (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        deprecation: GET_PET_DEPRECATED,
        sunset: PET_SUNSET_HTTP,
      });
      res.end('{"id":2,"name":"Tom","categoryId":1,"status":"sold"}');
    });

  it('carries none of pet(id)’s: no extension, no Deprecation/Sunset header, no deprecated-use log', async () => {
    deprecatedUpstream();
    for (let i = 0; i < 4; i++) {
      const { headers, body } = await post({ query: ENTITIES, variables: { representations: pets('2') } });
      expect(body).toEqual({
        data: { _entities: [{ __typename: 'Pet', id: '2', name: 'Tom', categoryId: '1', status: 'SOLD' }] },
      });
      expect(headers.get('deprecation')).toBeNull();
      expect(headers.get('sunset')).toBeNull();
    }
    expect(deprecatedUses).toEqual([]);
  });

  it('still answers after the sunset date, whatever the upstream then says (no SUNSET refusal)', async () => {
    clock = new Date(PET_SUNSET.getTime() + 1);
    const { body } = await post({ query: ENTITIES, variables: { representations: pets('2') } });
    expect(body.data._entities).toEqual([expect.objectContaining({ id: '2' })]);
  });

  it('pet(id) in the same request keeps its notice, with what the upstream announced', async () => {
    deprecatedUpstream();
    const { headers, body } = await post({
      query: `query Both($representations: [_Any!]!) {
        _entities(representations: $representations) { ... on Pet { id } }
        pet(id: "2") { name }
      }`,
      variables: { representations: pets('2') },
    });
    expect(body.data).toEqual({ _entities: [{ id: '2' }], pet: { name: 'Tom' } });
    expect(body.extensions.deprecations).toEqual([
      expect.objectContaining({
        field: 'Query.pet',
        upstream: { deprecation: GET_PET_DEPRECATED, sunset: PET_SUNSET_HTTP },
      }),
    ]);
    expect(headers.get('deprecation')).toBe(GET_PET_DEPRECATED);
    expect(petCalls()).toHaveLength(1);
    expect(deprecatedUses).toHaveLength(1);
  });
});

describe('FEDERATION off', () => {
  it('has no federation fields: _service and _entities do not validate', async () => {
    const plain = await startGateway({ upstreamUrl: upstream.url });
    try {
      for (const query of ['{ _service { sdl } }', ENTITIES]) {
        const result = await postJson(plain.url, { query, variables: { representations: pets('2') } }, AUTH);
        expect(result.status).toBe(400);
        expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      }
      expect(upstream.requests).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});

describe('INTROSPECTION off', () => {
  it('still answers _service: composition reads the SDL from a field, not from introspection', async () => {
    const closed = await startGateway({
      upstreamUrl: upstream.url,
      gateway: { federation: true, introspection: false, logger: createLogger('silent') },
    });
    try {
      const sdl = await postJson<{ _service: { sdl: string } }>(closed.url, {
        query: '{ _service { sdl } }',
      });
      expect(sdl.data?._service.sdl).toContain('@key(fields: "id")');
      const introspection = await postJson(closed.url, { query: '{ __schema { types { name } } }' });
      expect(introspection.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    } finally {
      await closed.close();
    }
  });
});
