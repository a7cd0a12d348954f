// @tier integration

import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { Client, fetchExchange } from '@urql/core';
import { describe, expect, it } from 'vitest';
import { type FakeUpstream, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';

// The clients apps ship, reading @defer from the gateway: Apollo Client 4 over multipart/mixed (the
// list is on screen before the deferred field arrives), urql over SSE.

const TOKEN = 'incremental-clients-token';
let upstream: FakeUpstream;
let gateway: RunningGateway;
useGateway({ tokens: [TOKEN], seed: (u) => seedPets(u, TOKEN) }, (started) => {
  ({ upstream, gateway } = started);
});

/** When the deferred field's upstream call was answered (performance.now()). */
let petAnsweredAt = Number.POSITIVE_INFINITY;

/** The deferred field's upstream call answers after `ms`: the list must not wait for it. */
function slowPet(ms: number) {
  petAnsweredAt = Number.POSITIVE_INFINITY;
  upstream.fault(/^\/v1\/pets\/2$/, (_req, res) => {
    setTimeout(() => {
      petAnsweredAt = performance.now();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":2,"name":"Tom","categoryId":1,"status":"sold"}');
    }, ms);
  });
}

const SCREEN = `query Screen {
  pets(limit: 2) { id name }
  ... @defer { pet(id: "2") { id name } }
}`;

describe('Apollo Client 4 with @defer', () => {
  it('renders the list first, then the deferred field when it arrives', async () => {
    slowPet(400);
    const client = new ApolloClient({
      cache: new InMemoryCache(),
      link: new HttpLink({ uri: gateway.url, headers: { authorization: `Bearer ${TOKEN}` } }),
      incrementalHandler: new Defer20220824Handler(),
    });
    const seen: Array<{ at: number; pets: number; pet: string | undefined; complete: boolean }> = [];
    await new Promise<void>((resolve, reject) => {
      const subscription = client.watchQuery({ query: gql(SCREEN) }).subscribe({
        next(result) {
          const data = result.data as { pets?: unknown[]; pet?: { name: string } } | undefined;
          if (!data?.pets) return;
          seen.push({
            at: performance.now(),
            pets: data.pets.length,
            pet: data.pet?.name,
            complete: result.dataState === 'complete',
          });
          if (result.dataState === 'complete') {
            subscription.unsubscribe();
            resolve();
          }
        },
        error: reject,
      });
    });
    const first = seen[0];
    const last = seen.at(-1);
    expect(first).toMatchObject({ pets: 2, pet: undefined, complete: false });
    expect(last).toMatchObject({ pets: 2, pet: 'Tom', complete: true });
    // The list was on screen before the upstream had even answered the deferred field's call.
    expect(first?.at).toBeLessThan(petAnsweredAt);
  });
});

describe('urql over SSE', () => {
  it('receives the first part, then the deferred one, from a text/event-stream answer', async () => {
    slowPet(200);
    const accepted: string[] = [];
    const client = new Client({
      url: gateway.url,
      exchanges: [fetchExchange],
      fetchOptions: { headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' } },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        accepted.push(response.headers.get('content-type') ?? '');
        return response;
      },
    });
    const results: Array<{ pet?: { name: string } | null; pets?: unknown[] } | undefined> = [];
    await new Promise<void>((resolve) => {
      // The source ends by itself after the last part; unsubscribing earlier would abort the read.
      client.query(SCREEN, {}).subscribe((result) => {
        results.push(result.data as (typeof results)[number]);
        if (!result.hasNext) resolve();
      });
    });
    expect(accepted[0]).toMatch(/^text\/event-stream/);
    expect(results[0]?.pets).toHaveLength(2);
    expect(results[0]?.pet).toBeUndefined();
    expect(results.at(-1)?.pet?.name).toBe('Tom');
  });
});
