// @tier integration

import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';

// A batch answers the same whichever lane serves it: the same bytes, status and headers with the
// fast lane on (which serves a batch of prepared reads itself, and hands the rest to Yoga) as with
// FAST_LANE=off.

const TOKEN = 'batch-lanes-token';
const AUTH = `Bearer ${TOKEN}`;
let upstream: FakeUpstream;
let fast: RunningGateway;
let yoga: RunningGateway | undefined;

useGateway({ tokens: [TOKEN], seed: (u) => seedPets(u, TOKEN) }, (started) => {
  ({ upstream, gateway: fast } = started);
});
afterAll(async () => {
  await yoga?.close();
});
beforeEach(async () => {
  yoga ??= await startGateway({ upstreamUrl: upstream.url, gateway: { fastLane: false } });
});

const LIST = { query: 'query L($limit: Int) { pets(limit: $limit) { id name } }', variables: { limit: 2 } };
const PET = { query: 'query P { pet(id: "2") { id name } }' };
const BATCHES: Record<string, unknown[]> = {
  'two reads': [LIST, PET],
  'two reads, pet(id) first': [PET, LIST],
  // Different lists: the one-call path's batch (fast-lane/batch.ts callEntriesOnce).
  'two lists': [LIST, { query: '{ pets(limit: 3, status: AVAILABLE) { id __typename } }' }],
  'the same list twice': [LIST, LIST],
  'a read and a bad entry': [LIST, { query: '{ nope }' }],
  'a mutation between reads': [
    LIST,
    { query: 'mutation { createPet(input: { name: "Lane", categoryId: "1" }) { name } }' },
    LIST,
  ],
};

async function send(url: string, body: unknown) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: AUTH },
    body: JSON.stringify(body),
  });
  const headers = [...response.headers].filter(([name]) => !['date', 'x-request-id'].includes(name));
  return { status: response.status, headers, text: await response.text() };
}

describe('batches in both lanes', () => {
  for (const [name, entries] of Object.entries(BATCHES)) {
    it(`${name}: the same answer with the fast lane on and off`, async () => {
      // Each operation alone first, three times: prepared for the fast lane, if it could serve it.
      for (const entry of entries) for (let i = 0; i < 3; i++) await send(fast.url, entry);
      upstream.requests.length = 0;
      // The batch itself, once: Yoga learns its answer's headers, as it does for any new batch (not
      // twice for the mutation's: its pets would differ from Yoga's run).
      if (!name.includes('mutation')) await send(fast.url, entries);
      upstream.requests.length = 0;
      const served = { ...fast.lanes?.served };
      const fromFast = await send(fast.url, entries);
      const fastCalls = upstream.requests.map((request) => `${request.method} ${request.path}`);
      upstream.requests.length = 0;
      const fromYoga = await send((yoga as RunningGateway).url, entries);
      const yogaCalls = upstream.requests.map((request) => `${request.method} ${request.path}`);
      expect(fromFast.status).toBe(200);
      expect(JSON.parse(fromFast.text)).toHaveLength(entries.length);
      // A created pet makes the second list differ by one name between the two runs: compare
      // shapes for the mutation's batch, bytes for the others.
      if (name.includes('mutation')) {
        expect(fromFast.text.replaceAll('"Lane"', '')).toBe(fromYoga.text.replaceAll('"Lane"', ''));
      } else {
        expect(fromFast.text).toBe(fromYoga.text);
      }
      expect(fromFast).toMatchObject({ status: fromYoga.status, headers: fromYoga.headers });
      // Reads go out at once, in any order.
      expect(fastCalls.sort()).toEqual(yogaCalls.sort());
      if (name === 'two lists')
        expect((fast.lanes?.served.oneCall ?? 0) - (served.oneCall ?? 0), 'the one-call path').toBe(1);
    });
  }
});

describe('the upstream’s own deprecation in a batch (#64 row 3)', () => {
  // GET /pets/{petId} announces its own dates; every entry that ran pet(id) reports them, wherever
  // it stands in the batch and whichever entry's call reached the upstream, and the answer's
  // headers carry them, in both lanes.
  const ANNOUNCED = { deprecation: '@1861920000', sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' };
  const announce = () =>
    upstream.fault(/^\/v1\/pets\/\d+$/, (req, res) => {
      const id = req.url?.split('/').pop();
      res.writeHead(200, { 'content-type': 'application/json', ...ANNOUNCED });
      res.end(`{"id":${id},"name":"Tom","categoryId":1,"status":"sold"}`);
    });
  const PET3 = { query: 'query Q { pet(id: "3") { name } }' };
  const positions: Record<string, unknown[]> = {
    'pet(id) first': [PET, LIST],
    'pet(id) last': [LIST, PET],
    'pet(id) in two entries': [LIST, PET, PET3],
    'the same pet(id) twice': [PET, LIST, PET],
  };
  for (const [name, entries] of Object.entries(positions)) {
    it(`${name}: every entry that ran pet(id) says what the upstream announced`, async () => {
      announce();
      try {
        for (const entry of entries) for (let i = 0; i < 3; i++) await send(fast.url, entry);
        for (let i = 0; i < 2; i++) await send(fast.url, entries);
        for (const url of [fast.url, (yoga as RunningGateway).url]) {
          const answer = await send(url, entries);
          const body = JSON.parse(answer.text) as Array<{
            extensions?: { deprecations?: Array<{ upstream?: unknown }> };
          }>;
          for (const [index, entry] of entries.entries()) {
            const notices = body[index]?.extensions?.deprecations;
            if (entry === LIST) expect(notices, `entry ${index}`).toBeUndefined();
            else expect(notices?.[0]?.upstream, `entry ${index} via ${url}`).toEqual(ANNOUNCED);
          }
          expect(new Map(answer.headers).get('deprecation'), url).toBe(ANNOUNCED.deprecation);
        }
      } finally {
        upstream.clearFaults();
      }
    });
  }
});
