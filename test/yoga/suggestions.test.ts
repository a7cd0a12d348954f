// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post, postJson } from '../support/graphql.ts';

// No message may hint at schema names a caller did not write ("Did you mean …?"): with
// introspection off that would hand the schema out one guess at a time. Every path that words an
// error from the schema: validation of the document (fields, arguments, types, enum literals,
// input object fields) and coercion of variables (enum values, input object fields).

const AUTH = 'Bearer suggestions-token';
const CASES: Array<[string, { query: string; variables?: Record<string, unknown> }]> = [
  [
    'an enum value in variables',
    { query: 'query($s: PetStatus) { pets(status: $s) { id } }', variables: { s: 'AVAILABL' } },
  ],
  [
    "an enum value in a subscription's variables",
    { query: 'subscription($s: PetStatus) { pets(status: $s) { id } }', variables: { s: 'AVAILABL' } },
  ],
  [
    'an enum value nested in an input variable',
    {
      query: 'mutation($i: NewPetInput!) { createPet(input: $i) { id } }',
      variables: { i: { name: 'Rex', categoryId: '1', status: 'SOL' } },
    },
  ],
  [
    'an input field in variables',
    {
      query: 'mutation($i: NewPetInput!) { createPet(input: $i) { id } }',
      variables: { i: { nme: 'Rex', name: 'Rex', categoryId: '1' } },
    },
  ],
  ['an enum literal', { query: '{ pets(status: AVAILABL) { id } }' }],
  ['an enum literal in lower case', { query: '{ pets(status: available) { id } }' }],
  [
    'an input field literal',
    { query: 'mutation { createPet(input: { nme: "Rex", name: "Rex", categoryId: "1" }) { id } }' },
  ],
  ['a field', { query: '{ pets { nme } }' }],
  ['an argument', { query: '{ pets(limt: 1) { id } }' }],
  ['a type', { query: 'query($s: PetStatuss) { pets { id } }' }],
  ['a root field', { query: '{ pet5 { id } }' }],
];
/** Names a hint would give away: enum values and fields the caller did not type in these cases. */
const HINTS = [
  /Did you mean/,
  /Suggestion/,
  /AVAILABLE|PENDING|SOLD/,
  /"name"/,
  /"limit"/,
  /"PetStatus"\?/,
  /"pets?"\?/,
];

let upstream: FakeUpstream;
const gateways: Record<'on' | 'off', RunningGateway> = {} as never;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add('suggestions-token');
  gateways.on = await startGateway({ upstreamUrl: upstream.url });
  gateways.off = await startGateway({ upstreamUrl: upstream.url, gateway: { introspection: false } });
});

afterAll(async () => {
  await gateways.on.close();
  await gateways.off.close();
  await upstream.close();
});

describe.each(['off', 'on'] as const)('introspection %s: no message suggests a schema name', (mode) => {
  it.each(CASES)('%s', async (_name, body) => {
    // A subscription is asked for as a stream, as its clients do (JSON alone is refused first).
    const result = body.query.startsWith('subscription')
      ? await postStream(gateways[mode].url, body)
      : await postJson(gateways[mode].url, body, AUTH);
    expect(result.status).toBe(400);
    expect(result.errors?.length).toBeGreaterThan(0);
    for (const error of result.errors ?? []) {
      for (const hint of HINTS) expect(error.message).not.toMatch(hint);
      // Still a sentence: the hint is cut, not replaced by a placeholder.
      expect(error.message).toMatch(/[^ ]\.$/);
      expect(error.extensions?.code).toMatch(/^(BAD_USER_INPUT|GRAPHQL_VALIDATION_FAILED)$/);
    }
  });
});

/** A subscription asked for over SSE: its status, and the first event's errors (Yoga words them as one). */
async function postStream(url: string, body: unknown) {
  const answer = await post(url, body, { authorization: AUTH, accept: 'text/event-stream' });
  const data = /^data: (.+)$/m.exec(answer.text)?.[1] ?? '{}';
  return {
    status: answer.status,
    ...(JSON.parse(data) as { errors?: Array<{ message: string; extensions?: { code?: string } }> }),
  };
}
