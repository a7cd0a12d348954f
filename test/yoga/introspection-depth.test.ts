// @tier integration

import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';

let gateway: RunningGateway;
useGateway({ tokens: [] }, (started) => {
  ({ gateway } = started);
});

const ofTypes = (n: number) => `${'ofType { '.repeat(n)}name${' }'.repeat(n)}`;

describe('MAX_DEPTH exempts introspection, __type as well as __schema (#39 item 5)', () => {
  it('answers the issue’s __type query (depth 6) as it answers __schema', async () => {
    const answer = await post(gateway.url, {
      query: '{ __type(name: "Pet") { fields { type { ofType { ofType { name } } } } } }',
    });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.__type.fields).toHaveLength(4);
  });

  it('bounds pure introspection at 15, __type and __schema alike, fragments flattened', async () => {
    const at = (k: number) => `{ __type(name: "Pet") { fields { type { ${ofTypes(k)} } } } }`;
    expect((await post(gateway.url, { query: at(11) })).status).toBe(200);
    const over = await post(gateway.url, { query: at(12) });
    expect(over.body.errors[0].extensions.code).toBe('DEPTH_LIMIT_EXCEEDED');
    const viaFragment = `{ ...I } fragment I on Query { __type(name: "Pet") { fields { type { ${ofTypes(3)} } } } }`;
    expect((await post(gateway.url, { query: viaFragment })).body.errors).toBeUndefined();
  });

  it('holds __schema beside ordinary fields to MAX_DEPTH, as __type (#64 row 4)', async () => {
    const mixed = `{ pets(limit: 1) { id } __schema { types { fields { type { ${ofTypes(4)} } } } } }`;
    const answer = await post(gateway.url, { query: mixed });
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('DEPTH_LIMIT_EXCEEDED');
    expect(answer.status).toBe(400);
    // Within MAX_DEPTH (5) it passes validation, and goes on to be refused for want of a key.
    const within = await post(gateway.url, {
      query: '{ pets(limit: 1) { id } __schema { types { name } } }',
    });
    expect(within.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('keeps MAX_DEPTH for an operation that is not pure introspection', async () => {
    const mixed = `{ __typename pets(limit: 1) { id } __type(name: "Pet") { fields { type { ${ofTypes(2)} } } } }`;
    const answer = await post(gateway.url, { query: mixed });
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0].extensions.code).toBe('DEPTH_LIMIT_EXCEEDED');
  });
});
