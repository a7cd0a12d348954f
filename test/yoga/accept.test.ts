// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';

// Which form an answer takes is read off Accept, as Yoga reads it. A request that accepts none of
// the forms the endpoint answers in is told so, in words and with a code, before anything runs.

const TOKEN = 'accept-token';
const AUTH = `Bearer ${TOKEN}`;
const LIST = { query: 'query AcceptList { pets(limit: 1) { id } }' };
const CREATE = {
  query: 'mutation AcceptCreate { createPet(input: { name: "Nox", categoryId: "1" }) { id } }',
};

let upstream: FakeUpstream;
let gateway: RunningGateway;
useGateway({ tokens: [TOKEN], seed: (u) => seedPets(u, TOKEN) }, (started) => {
  ({ upstream, gateway } = started);
});

async function post(url: string, body: unknown, accept: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, authorization: AUTH },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

type ErrorBody = { errors?: Array<{ message: string; extensions?: { code?: string } }> };

describe('an Accept that names no form the endpoint answers in', () => {
  it('is 406 NOT_ACCEPTABLE with a GraphQL error body saying what to accept, before any upstream call', async () => {
    for (const accept of [
      'text/html',
      'image/png, application/xml',
      'application/json; charset=iso-8859-1',
    ]) {
      const answer = await post(gateway.url, LIST, accept);
      expect(answer.status, accept).toBe(406);
      expect(answer.headers.get('content-type'), accept).toBe('application/json; charset=utf-8');
      const { errors } = JSON.parse(answer.text) as ErrorBody;
      expect(
        errors?.map((error) => error.extensions?.code),
        accept,
      ).toEqual(['NOT_ACCEPTABLE']);
      expect(errors?.[0]?.message).toContain('application/graphql-response+json');
      expect(errors?.[0]?.message).toContain('application/json');
      // Yoga's own list of what it answers in stays on the refusal.
      expect(answer.headers.get('accept'), accept).toContain('application/json');
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('runs no mutation whose answer could not be sent', async () => {
    const answer = await post(gateway.url, CREATE, 'text/html');
    expect(answer.status).toBe(406);
    expect(upstream.requests).toHaveLength(0);
  });

  describe('with the fast lane off and on', () => {
    let yogaOnly: RunningGateway;
    beforeAll(async () => {
      yogaOnly = await startGateway({ upstreamUrl: upstream.url, gateway: { fastLane: false } });
    });
    afterAll(async () => {
      await yogaOnly.close();
    });

    it('answers the same bytes from both, for an operation the fast lane has prepared', async () => {
      // Prepared for JSON: run (and compiled) twice, then served by the fast lane.
      for (let i = 0; i < 3; i++)
        expect((await post(gateway.url, LIST, 'application/json')).status).toBe(200);
      upstream.requests.length = 0;
      const viaEdge = await post(gateway.url, LIST, 'text/html');
      const viaYoga = await post(yogaOnly.url, LIST, 'text/html');
      expect(viaEdge.status).toBe(406);
      expect({ status: viaEdge.status, text: viaEdge.text }).toEqual({
        status: viaYoga.status,
        text: viaYoga.text,
      });
      expect(upstream.requests).toHaveLength(0);
    });
  });
});
