// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';

let upstream: FakeUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ upstreamUrl: upstream.url, config: { live: undefined } });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

describe('a subscription carries a code (#39 item 4)', () => {
  it('answers a subscription 400 SUBSCRIPTION_NOT_SUPPORTED on a gateway with LIVE=off, named or not', async () => {
    for (const query of ['subscription S { pets { id } }', 'subscription { __typename }']) {
      const answer = await post(gateway.url, { query });
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([
        {
          message: 'This gateway serves no subscriptions (LIVE=off).',
          locations: [{ line: 1, column: 1 }],
          extensions: { code: 'SUBSCRIPTION_NOT_SUPPORTED' },
        },
      ]);
    }
  });
});

describe('operation names in OPERATION_RESOLUTION_FAILURE are bounded (#39 item 7)', () => {
  it('cuts each listed name, so nine 6,500-character names make a short message', async () => {
    const names = Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(65 + i)}${'x'.repeat(6499)}`);
    const query = names.map((name) => `query ${name} { __typename }`).join('\n');
    const answer = await post(gateway.url, { query, operationName: 'x' });
    expect(answer.status).toBe(400);
    const [error] = answer.body.errors;
    expect(error.extensions.code).toBe('OPERATION_RESOLUTION_FAILURE');
    expect(error.message.length).toBeLessThan(1200);
    expect(error.message).toMatch(/^The document holds no operation named "x"; it holds "Axxx+…", "Bxxx+…"/);
    expect(answer.text.length).toBeLessThan(2000);
  });
});
