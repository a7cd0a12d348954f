// @tier integration

import { describe, expect, it } from 'vitest';
import { BIG_ID, type FakeUpstream, MAX_INT64 } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { execute, postJson } from '../support/graphql.ts';
import { CreatePet, GetPet, RepeatedPet } from '../support/operations.ts';

// int64 arguments (`pet(id)`, `createPet(input.categoryId)`) as a person types them: what is
// accepted, what goes upstream (always the canonical digits), and what a refusal says.

const TOKEN = 'int64-token';
const AUTH = `Bearer ${TOKEN}`;
const MIN_INT64 = '-9223372036854775808';

let upstream: FakeUpstream;
let gateway: RunningGateway;

useGateway(
  {
    tokens: [TOKEN],
    seed: (u) => {
      u.seed(TOKEN, { id: '7', name: 'Seven', categoryId: '1' });
      u.seed(TOKEN, { id: BIG_ID, name: 'Big', categoryId: MAX_INT64 });
      u.seed(TOKEN, { id: MAX_INT64, name: 'Max', categoryId: '1' });
      u.seed(TOKEN, { id: MIN_INT64, name: 'Min', categoryId: '1' });
    },
  },
  (started) => {
    ({ upstream, gateway } = started);
  },
);

describe('int64 arguments: accepted spellings are canonicalised before going upstream', () => {
  it.each([
    ['007', '7'],
    ['+7', '7'],
    [' 7 ', '7'],
    ['\t7\n', '7'],
    [`${'0'.repeat(10_000)}7`, '7'],
    [MAX_INT64, MAX_INT64],
    [`+0${MAX_INT64}`, MAX_INT64],
    [MIN_INT64, MIN_INT64],
    [`-000${MIN_INT64.slice(1)}`, MIN_INT64],
    [BIG_ID, BIG_ID],
  ])('pet(id: %j) is GET /v1/pets/%s and answers that id', async (id, canonical) => {
    const result = await execute(gateway.url, GetPet, { id }, AUTH);
    expect(result.errors, result.text).toBeUndefined();
    expect(result.data?.pet?.id).toBe(canonical);
    expect(upstream.requests.map((r) => r.path)).toEqual([`/v1/pets/${canonical}`]);
  });

  it('-0 is 0', async () => {
    const result = await execute(gateway.url, GetPet, { id: '-0' }, AUTH);
    expect(result.errors?.[0]?.extensions?.code).toBe('PET_NOT_FOUND');
    expect(upstream.requests.map((r) => r.path)).toEqual(['/v1/pets/0']);
  });

  it('"007", "+7" and "7" in one request are one upstream call', async () => {
    const result = await execute(gateway.url, RepeatedPet, { one: '007', two: '+7' }, AUTH);
    expect(result.errors, result.text).toBeUndefined();
    expect(result.data).toEqual({
      a: { id: '7' },
      b: { name: 'Seven' },
      c: { id: '7' },
      d: { categoryId: '1' },
    });
    expect(upstream.requests.map((r) => r.path)).toEqual(['/v1/pets/7']);
  });

  it('createPet sends categoryId " +0042 " as the integer literal 42', async () => {
    const result = await execute(
      gateway.url,
      CreatePet,
      { input: { name: 'Z', categoryId: ' +0042 ' } },
      AUTH,
    );
    expect(result.errors, result.text).toBeUndefined();
    expect(result.data?.createPet.categoryId).toBe('42');
    expect(upstream.requests[0]?.body).toBe('{"name":"Z","categoryId":42}');
  });

  it('a safe integer sent as a JSON number is a valid ID', async () => {
    const result = await postJson<{ pet: { id: string } }>(
      gateway.url,
      { query: 'query($id: ID!) { pet(id: $id) { id } }', variables: { id: 7 } },
      AUTH,
    );
    expect(result.errors, result.text).toBeUndefined();
    expect(result.data?.pet.id).toBe('7');
  });

  it('an int64 written as a GraphQL integer literal keeps every digit', async () => {
    const result = await postJson<{ pet: { id: string } }>(
      gateway.url,
      { query: `{ pet(id: ${BIG_ID}) { id } }` },
      AUTH,
    );
    expect(result.errors, result.text).toBeUndefined();
    expect(result.data?.pet.id).toBe(BIG_ID);
  });
});

describe('int64 arguments: refusals say what is wrong, with no upstream call', () => {
  it.each([
    ['7.0', 'decimal digits'],
    ['1e3', 'decimal digits'],
    ['0x10', 'decimal digits'],
    ['1_000', 'decimal digits'],
    ['1,000', 'decimal digits'],
    ['1 000', 'decimal digits'],
    ['--7', 'decimal digits'],
    ['+', 'decimal digits'],
    ['', 'decimal digits'],
    ['١٢٣', 'decimal digits'],
    ['9223372036854775808', 'outside that range'],
    ['-9223372036854775809', 'outside that range'],
    ['1'.repeat(10_000), 'outside that range'],
  ])('pet(id: %j): "%s"', async (id, words) => {
    const result = await execute(gateway.url, GetPet, { id }, AUTH);
    expect(result.data).toEqual({ pet: null });
    const [error] = result.errors ?? [];
    expect(error?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'id' });
    expect(error?.message).toContain(words);
    expect(error?.message.startsWith('id must be a 64-bit integer')).toBe(true);
    expect(error?.message.length).toBeLessThan(200);
    expect(upstream.requests).toEqual([]);
  });

  it('createPet names input.categoryId', async () => {
    const result = await execute(gateway.url, CreatePet, { input: { name: 'Z', categoryId: '3.5' } }, AUTH);
    expect(result.errors?.[0]?.message).toBe(
      'input.categoryId must be a 64-bit integer in decimal digits, such as "42"; got "3.5".',
    );
    expect(upstream.requests).toEqual([]);
  });
});

describe('int64 variables sent as JSON numbers past 2^53', () => {
  /** Posts the body text as written: a JS object literal would round the number before sending. */
  async function postRaw(body: string) {
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        authorization: AUTH,
      },
      body,
    });
    return { status: response.status, ...(await response.json()) } as Awaited<ReturnType<typeof postJson>>;
  }

  it.each([
    ['pet(id)', '"query($id: ID!) { pet(id: $id) { id } }"', `{"id": ${BIG_ID}}`, 'Variable "$id" '],
    [
      'createPet categoryId',
      '"mutation($input: NewPetInput!) { createPet(input: $input) { id } }"',
      `{"input": {"name": "Rex", "categoryId": ${MAX_INT64}}}`,
      'Variable "$input" at "categoryId" ',
    ],
  ])(
    '%s: refused as a request error that says it was rounded and to send a string',
    async (_name, query, variables, prefix) => {
      const result = await postRaw(`{"query": ${query}, "variables": ${variables}}`);
      expect(result.status).toBe(400);
      expect(result.data).toBeUndefined();
      const [error] = result.errors ?? [];
      expect(error?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(error?.message.startsWith(prefix)).toBe(true);
      expect(error?.message).toContain('2^53');
      expect(error?.message).toContain('as strings');
      expect(upstream.requests).toEqual([]);
    },
  );

  it('the same number sent as a string works', async () => {
    const result = await postJson(
      gateway.url,
      { query: 'query($id: ID!) { pet(id: $id) { id } }', variables: { id: BIG_ID } },
      AUTH,
    );
    expect(result.errors, result.text).toBeUndefined();
    expect(upstream.requests.map((r) => r.path)).toEqual([`/v1/pets/${BIG_ID}`]);
  });
});
