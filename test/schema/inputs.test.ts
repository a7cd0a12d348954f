// @tier integration

import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { postJson } from '../support/graphql.ts';

// One shape for every input error the gateway can pin to a field, so a form can put each message
// beside its field: BAD_USER_INPUT with `extensions.argument` naming the path (`input.name`; for a
// variable, the path inside it), and no upstream call. The HTTP status is README's: 200 for a field
// error (the field's argument refused), 400 for a variable that does not coerce (nothing ran).

const TOKEN = 'input-errors-token';
const AUTH = `Bearer ${TOKEN}`;
const CREATE = 'mutation Add($input: NewPetInput!) { createPet(input: $input) { id name } }';

let upstream: FakeUpstream;
let gateway: RunningGateway;

useGateway({ tokens: [TOKEN] }, (started) => {
  ({ upstream, gateway } = started);
});

const create = (input: Record<string, unknown>) =>
  postJson(gateway.url, { query: CREATE, variables: { input } }, AUTH);

describe('createPet input errors: one shape, pinned to the field, no upstream call', () => {
  it.each([
    ['name missing from the variable', { categoryId: '1' }, 400, 'input.name'],
    ['an empty name', { name: '', categoryId: '1' }, 200, 'input.name'],
    ['a blank name', { name: '   ', categoryId: '1' }, 200, 'input.name'],
    // The contract states no maximum, so without NAME_MAX_LENGTH the store decides.
    ['a name of 1,000 characters', { name: 'x'.repeat(1000), categoryId: '1' }, 'upstream', ''],
    ['categoryId that is not an integer', { name: 'Rex', categoryId: 'abc' }, 200, 'input.categoryId'],
    ['categoryId missing from the variable', { name: 'Rex' }, 400, 'input.categoryId'],
    ['a categoryId of the wrong type', { name: 'Rex', categoryId: { id: 1 } }, 400, 'input.categoryId'],
    ['a field the input does not have', { name: 'Rex', categoryId: '1', colour: 'red' }, 400, 'input.colour'],
  ] as const)('%s', async (_case, input, status, argument) => {
    const answer = await create(input);
    if (status === 'upstream') {
      expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/pets']);
      return;
    }
    expect(answer.status, answer.text).toBe(status);
    expect(answer.errors, answer.text).toHaveLength(1);
    expect(answer.errors?.[0]?.extensions, answer.text).toEqual({ code: 'BAD_USER_INPUT', argument });
    expect(answer.errors?.[0]?.message).toContain(argument);
    expect(upstream.requests).toEqual([]);
  });

  it('a variable named otherwise is named by its own path', async () => {
    const answer = await postJson(
      gateway.url,
      {
        query: 'mutation Add($pet: NewPetInput!) { createPet(input: $pet) { id } }',
        variables: { pet: { categoryId: '1' } },
      },
      AUTH,
    );
    expect(answer.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'pet.name' });
  });

  it('a required variable not provided is named by the variable', async () => {
    const answer = await postJson(gateway.url, { query: CREATE, variables: {} }, AUTH);
    expect(answer.status).toBe(400);
    expect(answer.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'input' });
  });

  it('a blank name written in the document is refused the same way', async () => {
    const answer = await postJson(
      gateway.url,
      { query: 'mutation { createPet(input: { name: " ", categoryId: "1" }) { id } }' },
      AUTH,
    );
    expect(answer.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'input.name' });
    expect(upstream.requests).toEqual([]);
  });

  it('an answer the upstream itself refuses keeps its code verbatim', async () => {
    upstream.fault(
      /^\/v1\/pets$/,
      (_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"code":"INVALID_FIELD","message":"\\"name\\" is taken","status":400}');
      },
      1,
    );
    const answer = await create({ name: 'Rex', categoryId: '1' });
    expect(answer.errors?.[0]?.extensions).toEqual({ code: 'INVALID_FIELD', status: 400 });
    upstream.clearFaults();
  });
});

describe('a name refused by the gateway says whose rule refused it', () => {
  it("blank: the gateway's own rule, not the contract's", async () => {
    const answer = await create({ name: ' \t ', categoryId: '1' });
    expect(answer.errors?.[0]?.message).toMatch(/this gateway's rule/);
    expect(upstream.requests).toEqual([]);
  });

  it('too long for the store: its own refusal, with its own code, when the gateway sets no maximum', async () => {
    const answer = await create({ name: 'x'.repeat(201), categoryId: '1' });
    expect(answer.errors?.[0]?.extensions).toEqual({ code: 'INVALID_FIELD', status: 400 });
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('NAME_MAX_LENGTH: a maximum only when configured', () => {
  let limited: RunningGateway;
  let limitedUpstream: FakeUpstream;
  useGateway({ tokens: [TOKEN], gateway: { limits: { ...DEFAULT_LIMITS, nameMaxLength: 5 } } }, (started) => {
    ({ upstream: limitedUpstream, gateway: limited } = started);
  });
  const send = (body: Record<string, unknown>) => postJson(limited.url, body, AUTH);

  it.each([
    ['as a variable', { query: CREATE, variables: { input: { name: ' Rexford ', categoryId: '1' } } }],
    [
      'written in the document (a plan built once, checked per request)',
      { query: 'mutation { createPet(input: { name: " Rexford ", categoryId: "1" }) { id } }' },
    ],
  ])('refuses a name past it %s, in the one input-error shape, before any call', async (_how, body) => {
    // Again and again: prepared operations move to the fast lane, which must refuse it too.
    for (let run = 0; run < 4; run++) {
      const answer = await send(body);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'input.name' });
      expect(answer.errors?.[0]?.message).toBe(
        "input.name must be at most 5 characters long (surrounding spaces aside; this gateway's NAME_MAX_LENGTH); got 7.",
      );
    }
    expect(limitedUpstream.requests).toEqual([]);
  });

  it('lets a name at it through, counted in code points after trimming', async () => {
    const answer = await send({
      query: CREATE,
      variables: { input: { name: ' 🐕🐕🐕🐕🐕 ', categoryId: '1' } },
    });
    expect(answer.errors, answer.text).toBeUndefined();
    expect(limitedUpstream.requests).toHaveLength(1);
  });
});
