// @tier integration

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { assertCompositionSuccess, composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIG_ID, type FakeUpstream, seedPets, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';

// The README's recipe, run: our subgraph SDL (schema/subgraph.graphql) composed with a second
// subgraph that extends Pet, and a real federation gateway (Hive Gateway's runtime) joining both
// over HTTP. Everything is on loopback; nothing is mocked.

const TOKEN = 'supergraph-token';
const AUTH = `Bearer ${TOKEN}`;

/** A second team's subgraph: shelter care notes for pets it only knows by key. */
const SHELTER_SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  type Pet @key(fields: "id") {
    id: ID!
    "What the shelter's staff noted about this pet."
    careNotes: [String!]!
  }

  type Query {
    "Pets the shelter features today, by key only: their names come from the pets subgraph."
    featuredPets: [Pet!]!
  }
`;

const CARE_NOTES: Record<string, string[]> = {
  [BIG_ID]: ['Walk twice a day'],
  '2': ['Shy with other cats', 'Indoor only'],
};

interface Listening {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server, path: string): Promise<Listening> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The shelter subgraph: a plain Yoga over @apollo/subgraph, recording the headers it receives. */
async function startShelter(seen: IncomingHttpHeaders[]): Promise<Listening> {
  const yoga = createYoga({
    schema: buildSubgraphSchema({
      typeDefs: parse(SHELTER_SDL),
      resolvers: {
        Query: { featuredPets: () => [{ id: BIG_ID }, { id: '2' }] },
        Pet: {
          __resolveReference: (reference: { id: string }) => ({ id: reference.id }),
          careNotes: (pet: { id: string }) => CARE_NOTES[pet.id] ?? [],
        },
      },
    }),
    logging: false,
  });
  return listen(
    createServer((req, res) => {
      seen.push(req.headers);
      void yoga(req, res);
    }),
    '/graphql',
  );
}

/** Hive Gateway's runtime, in-process, serving the composed supergraph over node:http. */
async function startRouter(supergraph: string, forwardKeyTo: ReadonlySet<string>): Promise<Listening> {
  const runtime = createGatewayRuntime({
    supergraph,
    logging: false,
    // A federation gateway forwards no client header by default; this is the configuration a
    // platform team writes so that each caller's key reaches the pets subgraph, and only it.
    propagateHeaders: {
      fromClientToSubgraphs: ({ request, subgraphName }) =>
        forwardKeyTo.has(subgraphName) ? { authorization: request.headers.get('authorization') } : {},
    },
  });
  const listening = await listen(createServer(runtime), '/graphql');
  return {
    url: listening.url,
    close: async () => {
      await listening.close();
      await runtime.dispose();
    },
  };
}

const query = (url: string, document: string, authorization = AUTH) =>
  post(url, { query: document }, { authorization, accept: 'application/json' });

let upstream: FakeUpstream;
let pets: RunningGateway;
let shelter: Listening;
let supergraph: string;
const atPets: IncomingHttpHeaders[] = [];
const atShelter: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  seedPets(upstream, TOKEN);
  pets = await startGateway({
    upstreamUrl: upstream.url,
    gateway: { federation: true },
    onRequest: (req) => atPets.push(req.headers),
  });
  shelter = await startShelter(atShelter);
  const composed = composeServices([
    {
      name: 'pets',
      typeDefs: parse(readFileSync(new URL('../../schema/subgraph.graphql', import.meta.url), 'utf8')),
      url: pets.url,
    },
    { name: 'shelter', typeDefs: parse(SHELTER_SDL), url: shelter.url },
  ]);
  assertCompositionSuccess(composed);
  supergraph = composed.supergraphSdl;
});

afterAll(async () => {
  await shelter?.close();
  await pets?.close();
  await upstream?.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
  atPets.length = 0;
  atShelter.length = 0;
});

describe('composition', () => {
  it('composes with a subgraph that extends Pet, into a public schema that joins both', () => {
    const publicSchema = composeServices([
      {
        name: 'pets',
        typeDefs: parse(readFileSync(new URL('../../schema/subgraph.graphql', import.meta.url), 'utf8')),
      },
      { name: 'shelter', typeDefs: parse(SHELTER_SDL) },
    ]).publicSdl;
    expect(publicSchema).toMatch(/type Pet \{[^}]*name: String![^}]*careNotes: \[String!\]![^}]*\}/s);
    expect(publicSchema).toContain('featuredPets: [Pet!]!');
    expect(publicSchema).toContain('pets(');
    expect(supergraph).toContain('@join__type(graph: PETS, key: "id")');
  });

  it('keeps the cost directives, so a router prices our fields as the gateway does (docs/cost.md)', () => {
    expect(supergraph).toContain('@link(url: "https://specs.apollo.dev/cost/v0.1"');
    // Beside what composition adds to a field the shelter shares (its @join__field).
    for (const field of ['id: ID!', 'name: String!', 'categoryId: ID!', 'status: PetStatus'])
      expect(supergraph).toMatch(new RegExp(`\\b${field}[^\\n]*@cost\\(weight: 1\\)`));
    // Query.pets, sized by its limit.
    expect(supergraph).toMatch(
      /\): \[Pet!\]![^\n]*@listSize\(requireOneSlicingArgument: false, assumedSize: 20, slicingArguments: \["limit"\]\)/,
    );
  });
});

describe('a query through Hive Gateway', () => {
  let router: Listening;
  beforeAll(async () => {
    router = await startRouter(supergraph, new Set(['pets']));
  });
  afterAll(async () => {
    await router?.close();
  });

  it('joins the shelter’s featured pets with their names from the animal store (our _entities)', async () => {
    const document = '{ featuredPets { id name status careNotes } }';
    // Sent several times: the repeated entity fetch is served by Yoga, then by the fast lane.
    const fastBefore = pets.lanes?.served.fast ?? 0;
    for (let i = 0; i < 4; i++) {
      const { status, body } = await query(router.url, document);
      expect(status).toBe(200);
      expect(body).toEqual({
        data: {
          featuredPets: [
            { id: BIG_ID, name: 'Rex', status: 'AVAILABLE', careNotes: ['Walk twice a day'] },
            { id: '2', name: 'Tom', status: 'SOLD', careNotes: ['Shy with other cats', 'Indoor only'] },
          ],
        },
      });
    }
    expect((pets.lanes?.served.fast ?? 0) - fastBefore).toBeGreaterThanOrEqual(1);
    // One entity fetch per query, one upstream call per pet, the caller's key all the way down.
    expect(atPets).toHaveLength(4);
    expect(upstream.requests.map((request) => request.path).sort()).toEqual(
      Array(4)
        .fill(['/v1/pets/2', `/v1/pets/${BIG_ID}`])
        .flat()
        .sort(),
    );
    expect(atPets.every((headers) => headers.authorization === AUTH)).toBe(true);
    expect(upstream.requests.every((request) => request.authorization === AUTH)).toBe(true);
    // The shelter was asked, but never saw the key.
    expect(atShelter).toHaveLength(4);
    expect(atShelter.some((headers) => 'authorization' in headers)).toBe(false);
  });

  it('starts at our pets(limit:) and fetches the shelter’s fields by key, still without its key', async () => {
    const { body } = await query(router.url, '{ pets(limit: 2) { id name careNotes } }');
    expect(body).toEqual({
      data: {
        pets: [
          { id: BIG_ID, name: 'Rex', careNotes: ['Walk twice a day'] },
          { id: '2', name: 'Tom', careNotes: ['Shy with other cats', 'Indoor only'] },
        ],
      },
    });
    expect(upstream.requests.map((request) => [request.path, request.authorization])).toEqual([
      ['/v1/pets?limit=2', AUTH],
    ]);
    expect(atShelter).toHaveLength(1);
    expect(atShelter[0]?.authorization).toBeUndefined();
  });

  it('passes our errors through: a caller without a valid key gets the upstream’s own code', async () => {
    const { body } = await query(router.url, '{ featuredPets { id name } }', 'Bearer not-a-key');
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(upstream.requests.every((request) => request.authorization === 'Bearer not-a-key')).toBe(true);
    expect(atShelter.some((headers) => 'authorization' in headers)).toBe(false);
  });
});

describe('a router configured to forward the key to every subgraph', () => {
  it('is the only way the shelter sees it', async () => {
    const router = await startRouter(supergraph, new Set(['pets', 'shelter']));
    try {
      const { body } = await query(router.url, '{ featuredPets { id careNotes } }');
      expect(body.data.featuredPets).toHaveLength(2);
      expect(atShelter.map((headers) => headers.authorization)).toEqual([AUTH]);
    } finally {
      await router.close();
    }
  });
});
