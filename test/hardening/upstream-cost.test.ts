// @tier integration

import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { type FakeUpstream, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import { post } from '../support/graphql.ts';

const KEY = 'upstream-cost-key';
let upstream: FakeUpstream;
let url: string;
useGateway({ tokens: [KEY], seed: (up) => seedPets(up, KEY) }, (started) => {
  upstream = started.upstream;
  url = started.gateway.url;
});

const creates = (n: number) =>
  `mutation { ${Array.from({ length: n }, (_, i) => `${i === 0 ? '' : `c${i}: `}createPet(input: { name: "P${i}", categoryId: "1" }) { id }`).join(' ')} }`;
const lookups = (n: number) =>
  `{ ${Array.from({ length: n }, (_, i) => `${i === 0 ? '' : `p${i}: `}pet(id: "${i + 1}") { id }`).join(' ')} }`;

describe('what one request can cost the upstream: at most MAX_ALIASES + 1 calls (#39 item 8)', () => {
  const most = DEFAULT_LIMITS.maxAliases + 1;

  it(`makes at most ${most} POSTs for one mutation, and none for one over the alias limit`, async () => {
    await post(url, { query: creates(most) }, { authorization: `Bearer ${KEY}` });
    expect(upstream.requests.filter((r) => r.method === 'POST')).toHaveLength(most);
    upstream.requests.length = 0;
    const over = await post(url, { query: creates(most + 1) }, { authorization: `Bearer ${KEY}` });
    expect(over.body.errors[0].extensions.code).toBe('ALIAS_LIMIT_EXCEEDED');
    expect(upstream.requests).toEqual([]);
  });

  it(`makes at most ${most} GETs for one query of distinct lookups`, async () => {
    await post(url, { query: lookups(most) }, { authorization: `Bearer ${KEY}` });
    expect(upstream.requests.filter((r) => r.method === 'GET')).toHaveLength(most);
  });
});
