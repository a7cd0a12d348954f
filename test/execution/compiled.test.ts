// @tier integration

import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { compilable } from '../../src/execution/compiled.ts';
import { BIG_ID, type FakeUpstream, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { postJson } from '../support/graphql.ts';

// A document's first run is interpreted by graphql-js; from its second run on it is compiled by
// graphql-jit (src/execution/compiled.ts). Every answer must be the same either way: status,
// data, error messages, codes, paths and locations, and the upstream calls made.

const TOKEN = 'jit-token';
const AUTH = `Bearer ${TOKEN}`;

let upstream: FakeUpstream;
let gateway: RunningGateway;

useGateway({ tokens: [TOKEN], seed: (u) => seedPets(u, TOKEN) }, (started) => {
  ({ upstream, gateway } = started);
});

interface Case {
  name: string;
  /** The first error's code; undefined when the operation succeeds. */
  code?: string;
  body: { query: string; variables?: Record<string, unknown>; operationName?: string };
  authorization?: string;
  setup?: () => void;
}

const cases: Case[] = [
  { name: 'a list with every field', body: { query: '{ pets(limit: 20) { id name categoryId status } }' } },
  {
    name: 'aliases, __typename and a status filter',
    body: {
      query: 'query Sold { a: pets(status: SOLD, limit: 2) { __typename id } b: pets(limit: 1) { n: name } }',
    },
  },
  {
    name: 'variables',
    body: {
      query: 'query($limit: Int, $id: ID!) { pets(limit: $limit) { id } pet(id: $id) { name categoryId } }',
      variables: { limit: 3, id: BIG_ID },
    },
  },
  {
    name: 'fragments with @skip and @include on spreads (never compiled: stays interpreted)',
    body: {
      query: `query($yes: Boolean!, $no: Boolean!) {
        pets(limit: 3) { ...A @include(if: $yes) ...B @skip(if: $yes) ... on Pet @include(if: $no) { status } }
      }
      fragment A on Pet { id name }
      fragment B on Pet { categoryId }`,
      variables: { yes: true, no: false },
    },
  },
  {
    name: 'an upstream 404 on one of several aliased fields',
    code: 'PET_NOT_FOUND',
    body: { query: '{ a: pet(id: "2") { name } b: pet(id: "404") { name } c: pet(id: "2") { id } }' },
  },
  {
    name: 'an upstream 404 inside a fragment',
    code: 'PET_NOT_FOUND',
    body: { query: '{ ...F } fragment F on Query { missing: pet(id: "77") { id name } }' },
  },
  {
    name: 'an upstream 500 on a list',
    code: 'BOOM',
    body: { query: '{ pets(limit: 2) { id } }' },
    setup: () =>
      upstream.fault(/^\/v1\/pets/, (_req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"code":"BOOM","message":"exploded","status":500}');
      }),
  },
  {
    name: 'a limit outside 1..100',
    code: 'BAD_USER_INPUT',
    body: { query: 'query($l: Int) { pets(limit: $l) { id } }', variables: { l: 101 } },
  },
  {
    name: 'a variable of the wrong type (refused before execution)',
    code: 'BAD_USER_INPUT',
    body: { query: 'query($id: ID!) { pet(id: $id) { id } }', variables: { id: { nested: true } } },
  },
  {
    name: 'a missing required variable',
    code: 'BAD_USER_INPUT',
    body: { query: 'query($id: ID!) { pet(id: $id) { id } }', variables: {} },
  },
  {
    name: 'an id out of int64 range',
    code: 'BAD_USER_INPUT',
    body: { query: '{ pet(id: "9223372036854775808") { id } }' },
  },
  {
    name: 'no Authorization header',
    code: 'UNAUTHENTICATED',
    body: { query: '{ pets { id } }' },
    authorization: '',
  },
  {
    name: 'one of two operations, chosen by name',
    body: {
      query: 'query One { pets(limit: 1) { id } } query Two { pets(limit: 2) { name } }',
      operationName: 'Two',
    },
  },
  {
    name: 'an operation over the cost limit (checked in the root resolvers)',
    code: 'COST_LIMIT_EXCEEDED',
    body: {
      query: `{ ${Array.from({ length: 8 }, (_, i) => `a${i}: pets(limit: 100) { id name categoryId }`).join(' ')} }`,
    },
  },
  {
    name: 'an operation name the document does not hold',
    code: 'OPERATION_RESOLUTION_FAILURE',
    body: { query: 'query One { pets(limit: 1) { id } }', operationName: 'Two' },
  },
  {
    name: 'a createPet refused by the upstream',
    code: 'PET_EXISTS',
    body: { query: 'mutation { createPet(input: { name: "Rex", categoryId: "1" }) { id } }' },
    setup: () =>
      upstream.fault(/^\/v1\/pets/, (_req, res) => {
        res.writeHead(409, { 'content-type': 'application/json' });
        res.end('{"code":"PET_EXISTS","message":"Rex is already here.","status":409}');
      }),
  },
];

describe('compiled execution answers exactly as graphql-js does', () => {
  it.each(cases)('$name', async ({ body, authorization, setup, code }) => {
    const answers = [];
    for (let run = 0; run < 3; run++) {
      upstream.requests.length = 0;
      setup?.();
      const response = await postJson(gateway.url, body, authorization === '' ? undefined : AUTH);
      answers.push({
        status: response.status,
        // The bytes, not the parsed JSON: key order is part of what clients see (errors first).
        text: response.text,
        body: JSON.parse(response.text),
        upstream: upstream.requests.map((r) => `${r.method} ${r.path}`).sort(),
      });
    }
    // Each case exercises what its name says: the code of its first error (none for successes).
    expect(answers[0]?.body.errors?.[0]?.extensions?.code).toBe(code);
    // Run 1 is interpreted, runs 2 and 3 compiled.
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it('keeps the error locations graphql-js gives, for both aliases of a repeated failing field', async () => {
    const query = '{ pet(id: "404") { id }\n  pet(id: "404") { name } }';
    for (let run = 0; run < 3; run++) {
      const response = await postJson(gateway.url, { query }, AUTH);
      const body = JSON.parse(response.text);
      expect(body.errors[0].locations).toEqual([
        { line: 1, column: 3 },
        { line: 2, column: 3 },
      ]);
      expect(body.errors[0].extensions.code).toBe('PET_NOT_FOUND');
    }
  });

  it('answers a fragment fan-out document, which is too large to compile, the same every time', async () => {
    const query = fanOut(12);
    expect(compilable(parse(query))).toBe(false);
    for (let run = 0; run < 3; run++) {
      const response = await postJson(gateway.url, { query }, AUTH);
      expect(JSON.parse(response.text)).toEqual({ data: { __typename: 'Query' } });
    }
  });
});

describe('which documents are compiled', () => {
  const fields = (n: number) =>
    `{ pets { ${Array.from({ length: n - 1 }, (_, i) => `f${i}: id`).join(' ')} } }`;

  it('compiles up to 400 fields, fragments expanded, and no more', () => {
    expect(compilable(parse(fields(400)))).toBe(true);
    expect(compilable(parse(fields(401)))).toBe(false);
    expect(compilable(parse(fanOut(8)))).toBe(true); // 2^8 = 256 spreads + fields
    expect(compilable(parse(fanOut(9)))).toBe(false);
  });

  it('leaves operations with @skip or @include to graphql-js, wherever the condition sits', () => {
    expect(compilable(parse('{ pets { id name @include(if: true) } }'))).toBe(false);
    expect(compilable(parse('{ pets { ... on Pet @skip(if: false) { id } } }'))).toBe(false);
    expect(compilable(parse('{ pets { ...F } } fragment F on Pet { id @skip(if: true) name }'))).toBe(false);
    expect(
      compilable(
        parse('query($s: Boolean!) { pets { ...F @include(if: $s) id } } fragment F on Pet { name }'),
      ),
    ).toBe(false);
    expect(compilable(parse('{ pets { ...F id } } fragment F on Pet { name }'))).toBe(true);
  });

  it('looks only at the operation chosen by name', () => {
    const document = parse(`query Small { pets { id } } query Large ${fields(401)}`);
    expect(compilable(document, 'Small')).toBe(true);
    expect(compilable(document, 'Large')).toBe(false);
    expect(compilable(document, 'Missing')).toBe(false);
  });
});

/** `levels` fragments, each spreading the next twice: 2^levels fields once expanded. */
function fanOut(levels: number): string {
  const fragments = Array.from({ length: levels }, (_, i) =>
    i === levels - 1
      ? `fragment F${i} on Query { __typename }`
      : `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`,
  ).join('\n');
  return `{ ...F0 }\n${fragments}`;
}
