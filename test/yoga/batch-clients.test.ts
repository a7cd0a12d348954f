// @tier integration

import { ApolloClient, InMemoryCache } from '@apollo/client';
import { BatchHttpLink } from '@apollo/client/link/batch-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPetstore, startPetstore } from '../../src/petstore/server.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { GetPet, ListPets } from '../support/operations.ts';

// Apollo Client 4's BatchHttpLink, as an app ships it, against the gateway over the reference
// service: three queries issued together go out as one HTTP request and each gets its own answer.

const KEY = 'batch-client-key';
let petstore: RunningPetstore;
let gateway: RunningGateway;

beforeAll(async () => {
  petstore = await startPetstore({ dbPath: ':memory:', apiKey: KEY, port: 0 });
  gateway = await startGateway({ upstreamUrl: petstore.url });
});
afterAll(async () => {
  await gateway.close();
  await petstore.close();
});

describe("Apollo Client's BatchHttpLink", () => {
  it('sends three queries in one HTTP request and gives each its own result', async () => {
    const bodies: unknown[] = [];
    const client = new ApolloClient({
      cache: new InMemoryCache(),
      link: new BatchHttpLink({
        uri: gateway.url,
        headers: { authorization: `Bearer ${KEY}` },
        batchMax: 10,
        batchInterval: 20,
        fetch: async (input, init) => {
          bodies.push(JSON.parse(String(init?.body)));
          return fetch(input, init);
        },
      }),
    });
    const [available, sold, one] = await Promise.all([
      client.query({ query: ListPets, variables: { status: 'AVAILABLE', limit: 3 } }),
      client.query({ query: ListPets, variables: { status: 'SOLD', limit: 2 } }),
      client.query({ query: GetPet, variables: { id: '1' } }),
    ]);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toHaveLength(3);
    expect(available.data?.pets.map((pet) => pet.status)).toEqual(['AVAILABLE', 'AVAILABLE', 'AVAILABLE']);
    expect(sold.data?.pets.map((pet) => pet.status)).toEqual(['SOLD', 'SOLD']);
    expect(one.data?.pet?.id).toBe('1');
  });
});
