// @tier integration

import { validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';

// The trusted documents as REST: GET /rest/{name} for a query, POST for a mutation, the variables
// typed by the operation, JSON or CSV, an OpenAPI document, the same rules as /graphql.

const KEY = 'rest-key';
const DOCUMENTS = new Map([
  [
    'sha256:by-status',
    '# Pets of one status, for spreadsheets\nquery PetsByStatus($status: PetStatus, $limit: Int) { pets(status: $status, limit: $limit) { id name categoryId status } }',
  ],
  ['sha256:one-pet', 'query OnePet($id: ID!) { pet(id: $id) { id name } }'],
  [
    'sha256:add-pet',
    'mutation AddPet($name: String!, $categoryId: ID!) { createPet(input: { name: $name, categoryId: $categoryId }) { id name } }',
  ],
]);

let gateway: RunningGateway;
let upstream: FakeUpstream;
useGateway(
  {
    tokens: [KEY],
    seed: (fake) => {
      seedPets(fake, KEY);
      fake.seed(KEY, { id: '9007199254740993', name: '=HYPERLINK("x")', categoryId: '2', status: 'sold' });
      fake.seed(KEY, { id: '12', name: 'Rex, "the" dog', categoryId: '3', status: 'sold' });
    },
    gateway: { gateway: { persistedOperations: { mode: 'require', documents: DOCUMENTS } } },
  },
  (started) => ({ gateway, upstream } = started),
);

const auth = { authorization: `Bearer ${KEY}` };
const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(new URL(path, gateway.origin), { headers: { ...auth, ...headers } });
const upstreamCalls = () => upstream.requests.length;

describe('a trusted query as GET /rest/{name}', () => {
  it('answers its GraphQL result as JSON, its parameters typed by the operation', async () => {
    const response = await get('/rest/PetsByStatus?status=SOLD&limit=5');
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.data.pets.map((pet: { status: string }) => pet.status)).toEqual(['SOLD', 'SOLD', 'SOLD']);
    expect(body.data.pets.map((pet: { id: string }) => pet.id)).toContain('9007199254740993');
  });

  it('refuses a parameter of the wrong type, an unknown one and a missing one: 400 BAD_USER_INPUT, no upstream call', async () => {
    const before = upstreamCalls();
    for (const [path, words] of [
      ['/rest/PetsByStatus?limit=many', /limit must be a 32-bit integer/],
      ['/rest/PetsByStatus?status=LOST', /status must be one of AVAILABLE, PENDING, SOLD/],
      ['/rest/PetsByStatus?lmit=5', /unknown parameter "lmit": PetsByStatus takes status, limit/],
      ['/rest/OnePet', /id is required/],
    ] as const) {
      const response = await get(path);
      expect(response.status, path).toBe(400);
      const body = await response.json();
      expect(body.errors[0].extensions.code, path).toBe('BAD_USER_INPUT');
      expect(body.errors[0].message, path).toMatch(words);
    }
    expect(upstreamCalls()).toBe(before);
  });

  it("holds to the gateway's limits as /graphql does: limit=500 is refused with /graphql's code and status", async () => {
    const before = upstreamCalls();
    const response = await get('/rest/PetsByStatus?limit=500');
    const graphql = await fetch(new URL('/graphql', gateway.origin), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ documentId: 'sha256:by-status', variables: { limit: 500 } }),
    });
    const [rest, direct] = [await response.json(), await graphql.json()];
    expect(response.status).toBe(graphql.status);
    expect(rest.errors[0].extensions.code).toBe(direct.errors[0].extensions.code);
    expect(response.status).toBe(400);
    expect(upstreamCalls()).toBe(before);
  });

  it('answers a list as CSV for Accept: text/csv or ?format=csv: a header row, ids exact, quotes and formulas defused', async () => {
    for (const [path, headers] of [
      ['/rest/PetsByStatus?status=SOLD', { accept: 'text/csv' }],
      ['/rest/PetsByStatus?status=SOLD&format=csv', {}],
    ] as const) {
      const response = await get(path, headers);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      const lines = (await response.text()).trimEnd().split('\r\n');
      expect(lines[0]).toBe('id,name,categoryId,status');
      expect(lines).toContain(`9007199254740993,"'=HYPERLINK(""x"")",2,SOLD`);
      expect(lines).toContain('12,"Rex, ""the"" dog",3,SOLD');
    }
  });

  it('tags each form and answers 304 to a tag it still holds', async () => {
    for (const headers of [{}, { accept: 'text/csv' }] as Record<string, string>[]) {
      const first = await get('/rest/PetsByStatus?status=SOLD', headers);
      const etag = first.headers.get('etag') ?? '';
      expect(etag).toMatch(/^W\//);
      const again = await get('/rest/PetsByStatus?status=SOLD', { ...headers, 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    }
  });

  it('answers 401 without a key, 404 for an unknown name, 405 for the wrong method', async () => {
    expect((await fetch(new URL('/rest/PetsByStatus', gateway.origin))).status).toBe(401);
    const unknown = await get('/rest/NoSuchThing');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).errors[0].message).toMatch(/openapi\.json/);
    expect((await get('/rest/%zz')).status).toBe(404);
    const posted = await fetch(new URL('/rest/PetsByStatus', gateway.origin), {
      method: 'POST',
      headers: auth,
    });
    expect([posted.status, posted.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('answers HEAD as GET without the body: the same status, type and tag', async () => {
    const url = new URL('/rest/PetsByStatus?status=SOLD', gateway.origin);
    const got = await fetch(url, { headers: auth });
    const head = await fetch(url, { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(got.headers.get('content-type'));
    expect(head.headers.get('etag')).toBe(got.headers.get('etag'));
    expect(await head.text()).toBe('');
  });
});

describe('a trusted mutation as POST /rest/{name}', () => {
  it('creates with its JSON body as variables', async () => {
    const response = await fetch(new URL('/rest/AddPet', gateway.origin), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Posted', categoryId: '4' }),
    });
    expect(response.status).toBe(200);
    expect((await response.json()).data.createPet.name).toBe('Posted');
  });
});

describe('GET /rest/openapi.json', () => {
  it('describes every endpoint, and a real OpenAPI validator accepts it', async () => {
    const response = await fetch(new URL('/rest/openapi.json', gateway.origin));
    expect(response.status).toBe(200);
    const document = await response.json();
    expect(Object.keys(document.paths).sort()).toEqual([
      '/rest/AddPet',
      '/rest/OnePet',
      '/rest/PetsByStatus',
    ]);
    const list = document.paths['/rest/PetsByStatus'].get;
    expect(list.summary).toBe('Pets of one status, for spreadsheets');
    expect(list.parameters.find((p: { name: string }) => p.name === 'status').schema.enum).toEqual([
      'AVAILABLE',
      'PENDING',
      'SOLD',
    ]);
    expect(
      document.paths['/rest/AddPet'].post.requestBody.content['application/json'].schema.required,
    ).toEqual(['name', 'categoryId']);
    const result = await validate(structuredClone(document));
    expect(result.valid, JSON.stringify(result)).toBe(true);
  });
});
