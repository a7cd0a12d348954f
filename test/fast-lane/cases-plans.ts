import type { Case } from './sides.ts';

// What a compiled plan answers (fields merged, calls shared, creates in order, a failure midway),
// what no plan takes (a condition, incremental delivery, two operations, introspection), and
// batches, each sent alike to every side.

export const planCases: Case[] = [
  {
    name: 'plan: one response key from two fields, fragments and inline fragments merged in order',
    body: {
      query:
        '{ pets(limit: 3) { id } pets(limit: 3) { ...F ... on Pet { s: status id } } __typename } fragment F on Pet { name __typename }',
    },
  },
  { name: 'plan: only __typename (no upstream call)', body: { query: '{ __typename }' } },
  {
    name: 'plan: the same pet twice and a list in one operation (one call each)',
    body: {
      query: '{ a: pet(id: "2") { name } b: pet(id: "002") { id } c: pets(limit: 2, status: SOLD) { id } }',
    },
  },
  {
    name: 'plan: two creates in one mutation, in order, with __typename',
    body: {
      query:
        'mutation Two { __typename a: createPet(input: { name: "A", categoryId: "1" }) { name categoryId } b: createPet(input: { name: "B", categoryId: "2", status: SOLD }) { status } }',
    },
  },
  {
    name: 'plan: a mutation whose second create the upstream refuses (the first sent once)',
    code: 'PET_EXISTS',
    warm: {
      query:
        'mutation Pair($b: NewPetInput!) { a: createPet(input: { name: "A", categoryId: "1" }) { name } b: createPet(input: $b) { name } }',
      variables: { b: { name: 'B', categoryId: '1' } },
    },
    body: {
      query:
        'mutation Pair($b: NewPetInput!) { a: createPet(input: { name: "A", categoryId: "1" }) { name } b: createPet(input: $b) { name } }',
      variables: { b: { name: 'Rex', categoryId: '1' } },
    },
    setup: (upstream) =>
      upstream.fault(
        /^\/v1\/pets$/,
        (_req, res, body) => {
          if (!body.includes('Rex')) {
            res.writeHead(201, { 'content-type': 'application/json' });
            res.end('{"id":77,"name":"A","categoryId":1}');
            return;
          }
          res.writeHead(409, { 'content-type': 'application/json' });
          res.end('{"code":"PET_EXISTS","message":"Rex is already here.","status":409}');
        },
        2,
      ),
  },
  {
    name: 'plan: a list received, then a pet the upstream does not have (nothing sent twice)',
    code: 'PET_NOT_FOUND',
    warm: {
      query: 'query M($id: ID!) { pets(limit: 2) { id } pet(id: $id) { name } }',
      variables: { id: '2' },
    },
    body: {
      query: 'query M($id: ID!) { pets(limit: 2) { id } pet(id: $id) { name } }',
      variables: { id: '404' },
    },
  },
  {
    // graphql-jit orders a condition's fields wrongly, so such operations are never compiled, hence
    // never prepared: Yoga answers them.
    name: 'no plan: @include (Yoga interprets it)',
    body: {
      query: 'query I($on: Boolean!) { pets(limit: 1) { id name @include(if: $on) } }',
      variables: { on: true },
    },
    yogaOnly: true,
  },
  {
    name: 'incremental: @defer to a client that accepts only JSON (merged into one answer)',
    body: { query: '{ a: pets(limit: 1) { id } ... @defer { b: pets(limit: 2) { name } } }' },
    yogaOnly: true,
  },
  {
    name: 'incremental: @defer over multipart/mixed (Yoga writes the parts)',
    body: { query: '{ a: pets(limit: 1) { id } ... @defer { b: pets(limit: 2) { name } } }' },
    headers: { accept: 'multipart/mixed;deferSpec=20220824, application/json;q=0.9' },
    yogaOnly: true,
  },
  {
    name: 'incremental: @stream over SSE',
    body: { query: '{ pets(limit: 2) @stream(initialCount: 1) { id name } }' },
    headers: { accept: 'text/event-stream' },
    yogaOnly: true,
  },
  {
    name: 'batch: two operations in one POST, one JSON array',
    body: [{ query: '{ pets(limit: 1) { id } }' }, { query: 'query Two { a: pets(limit: 2) { name } }' }],
  },
  {
    name: 'batch: two entries asking for the same list (one upstream call, on the first line)',
    body: [{ query: '{ pets(limit: 3) { id } }' }, { query: 'query Same { pets(limit: 3) { name } }' }],
  },
  {
    name: 'batch: one entry the upstream fails (the fast lane hands the batch over, nothing sent twice)',
    body: [{ query: '{ pets(limit: 4) { id } }' }, { query: 'query Bad { pet(id: "404") { id } }' }],
    warm: [{ query: '{ pets(limit: 4) { id } }' }, { query: 'query Bad { pet(id: "2") { id } }' }],
    code: 'PET_NOT_FOUND',
  },
  {
    name: 'batch: an entry with @defer, merged inside the array',
    body: [{ query: '{ a: pets(limit: 1) { id } ... @defer { b: pets(limit: 2) { name } } }' }],
    headers: { accept: 'multipart/mixed, application/json' },
    yogaOnly: true,
  },
  {
    name: 'no plan: two operations in the document',
    body: {
      query: 'query A { pets(limit: 1) { id } } query B { pets(limit: 2) { name } }',
      operationName: 'B',
    },
    unplanned: true,
  },
  {
    name: 'no plan: introspection beside a list',
    body: { query: '{ __schema { queryType { name } } pets(limit: 1) { id } }' },
    unplanned: true,
  },
];
