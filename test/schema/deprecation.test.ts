// @tier integration

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GET_PET_DEPRECATED,
  PET_SUNSET,
  PET_SUNSET_DAY,
  PET_SUNSET_HTTP,
} from '../../src/contract/animal-store.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { PET_DEPRECATION_REASON } from '../../src/schema/deprecation.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { GetPet, ListPets } from '../support/operations.ts';

const AUTH = 'Bearer deprecation-token';

let upstream: FakeUpstream;
let gateway: RunningGateway;
let url: string;
let clock = new Date('2026-11-22T12:00:00Z');
const events: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add('deprecation-token');
  upstream.seed('deprecation-token', { id: '1', name: 'Rex', categoryId: '2', status: 'sold' });
  // The real JSON logger, writing into the test instead of stdout.
  const logger = createLogger('info', {
    write: (line: string) => {
      const event = JSON.parse(line);
      if (event.msg === 'deprecated field used') events.push(event);
    },
  });
  gateway = await startGateway({ upstreamUrl: upstream.url, gateway: { now: () => clock, logger } });
  url = gateway.url;
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

afterEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
  events.length = 0;
  clock = new Date('2026-11-22T12:00:00Z');
});

async function getPetRaw(headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTH, ...headers },
    body: JSON.stringify({ query: 'query One { pet(id: "1") { id name } }' }),
  });
  return { response, body: await response.json() };
}

describe('the sunset of pet(id), made visible', () => {
  it('adds extensions.deprecations and Deprecation/Sunset headers when pet(id) runs', async () => {
    const { response, body } = await getPetRaw();
    expect(body.data).toEqual({ pet: { id: '1', name: 'Rex' } });
    expect(body.extensions.deprecations).toEqual([
      {
        field: 'Query.pet',
        reason: expect.stringContaining(PET_SUNSET_DAY),
        replacement: 'Query.pets',
        sunset: PET_SUNSET_DAY,
      },
    ]);
    expect(response.headers.get('sunset')).toBe(PET_SUNSET_HTTP);
    expect(response.headers.get('deprecation')).toMatch(/^@\d+$/);
  });

  it('says it in one short sentence: the sunset, the replacement, where to read more (#44 item 6)', async () => {
    const { body } = await getPetRaw();
    const [{ reason }] = body.extensions.deprecations;
    expect(reason).toBe(PET_DEPRECATION_REASON);
    expect(reason.length).toBeLessThanOrEqual(140);
    expect(reason.match(/\. /g)).toBeNull();
    expect(reason).toContain(PET_SUNSET_DAY);
    expect(reason).toContain('pets(status:, limit:)');
    expect(reason).toContain('README.md#deprecation-timeline');
  });

  it('says nothing when the id was refused before any upstream call (#44 item 6)', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify({ query: '{ pet(id: "1.5") { id } }' }),
    });
    const body = await response.json();
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(body.extensions?.deprecations).toBeUndefined();
    expect(response.headers.get('sunset')).toBeNull();
    expect(response.headers.get('deprecation')).toBeNull();
    expect(upstream.requests).toEqual([]);
    expect(events).toEqual([]);
  });

  it('says nothing when the operation does not touch pet(id)', async () => {
    const result = await execute(url, ListPets, {}, AUTH);
    expect(result.errors).toBeUndefined();
    expect(result.text).not.toContain('deprecations');
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify({ query: '{ pets { id } }' }),
    });
    expect(response.headers.get('sunset')).toBeNull();
    expect(response.headers.get('deprecation')).toBeNull();
  });

  it('carries the upstream’s own Deprecation and Sunset headers into the extension and the response', async () => {
    upstream.fault(/^\/v1\/pets\/1$/, (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        deprecation: GET_PET_DEPRECATED,
        sunset: PET_SUNSET_HTTP,
      });
      res.end('{"id":1,"name":"Rex","categoryId":2}');
    });
    const { response, body } = await getPetRaw();
    expect(body.extensions.deprecations[0].upstream).toEqual({
      deprecation: GET_PET_DEPRECATED,
      sunset: PET_SUNSET_HTTP,
    });
    expect(response.headers.get('deprecation')).toBe(GET_PET_DEPRECATED);
  });

  it('records which client used the deprecated field, from graphql-client-name/-version', async () => {
    await getPetRaw({ 'graphql-client-name': 'ios-app', 'graphql-client-version': '3.1.4' });
    expect(events).toEqual([
      expect.objectContaining({
        msg: 'deprecated field used',
        fields: ['Query.pet'],
        clientName: 'ios-app',
        clientVersion: '3.1.4',
      }),
    ]);
    await getPetRaw({ 'graphql-client-name': `evil"}{"level":"x<script>${'z'.repeat(100)}` });
    expect(events[1]?.clientName).toBe(`evillevelxscript${'z'.repeat(48)}`);
  });

  it('answers SUNSET without calling the upstream once the sunset has come', async () => {
    clock = new Date(PET_SUNSET.getTime());
    const result = await execute(url, GetPet, { id: '1' }, AUTH);
    expect(result.data).toEqual({ pet: null });
    expect(result.errors?.[0]?.extensions).toEqual({ code: 'SUNSET', status: 410 });
    expect(result.errors?.[0]?.message).toContain('pets(status:, limit:)');
    expect(upstream.requests).toEqual([]);
    clock = new Date(PET_SUNSET.getTime() - 1);
    const dayBefore = await execute(url, GetPet, { id: '1' }, AUTH);
    expect(dayBefore.data?.pet?.name).toBe('Rex');
  });
});
