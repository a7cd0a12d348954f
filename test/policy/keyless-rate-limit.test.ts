// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClientAddresses } from '../../src/edge/client-address.ts';
import { createRateLimit, type RateLimit } from '../../src/policy/rate-limit.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';

const KEY = 'keyed-caller-token';
const INTROSPECTION = { query: '{ __schema { queryType { name } } }' };

describe('RATE_LIMIT_PER_MINUTE without a key: limited per client address (#39 item 2)', () => {
  let upstream: FakeUpstream;
  let gateway: RunningGateway;
  let limit: RateLimit;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    upstream.tokens.add(KEY);
    // The tests' peer is always 127.0.0.1: trusting it lets each test name its client address.
    const addresses = createClientAddresses(['127.0.0.1']);
    limit = createRateLimit({ perMinute: 5, clientAddress: addresses.of });
    gateway = await startGateway({ upstreamUrl: upstream.url, gateway: { rateLimit: limit } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    await limit.close();
  });

  const keyless = (address: string, headers: Record<string, string> = {}) =>
    post(gateway.url, INTROSPECTION, { headers: { 'x-forwarded-for': address, ...headers } });

  it('answers an address its N keyless requests a minute, then 429 RATE_LIMITED with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await keyless('203.0.113.5')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const refused = await keyless('203.0.113.5');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/^Too many requests without an API key from this address/),
      extensions: { code: 'RATE_LIMITED', retryAfter: Number(refused.headers.get('retry-after')) },
    });
    // A malformed header is no key either: it spends the same budget.
    expect((await keyless('203.0.113.5', { authorization: 'Basic abc' })).status).toBe(429);
    // Another address has its own minute.
    expect((await keyless('203.0.113.6')).status).toBe(200);
  });

  it('leaves a keyed caller from the same address unaffected', async () => {
    for (let i = 0; i < 6; i++) await keyless('203.0.113.7');
    const keyed = await post(
      gateway.url,
      { query: '{ pets(limit: 1) { id } }' },
      { authorization: `Bearer ${KEY}`, headers: { 'x-forwarded-for': '203.0.113.7' } },
    );
    expect(keyed.status).toBe(200);
    expect(keyed.body.errors).toBeUndefined();
  });
});
