// @tier integration

import { createHash } from 'node:crypto';
import { ApolloClient, type DocumentNode, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPetstore, startPetstore } from '../../src/petstore/server.ts';
import { createMemoryDocumentStore } from '../../src/stores/registered-documents.ts';
import { loadPersistedDocuments } from '../../src/yoga/request/persisted-documents.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { CreatePet, GetPet, ListPets } from '../support/operations.ts';

// The client recipes of docs/mobile.md, run with the real client libraries against a real gateway
// over the reference service: Apollo Client 4's PersistedQueryLink and urql's persistedExchange,
// unmodified but for the documented lines. What each client puts on the wire is recorded by the
// fetch it is given, and asserted: the first use of a document registers it, later uses send only
// its hash.

const KEY = 'recipes-key';
const MANIFEST = new URL('../generated/persisted-documents.json', import.meta.url).pathname;

let petstore: RunningPetstore;
const gateways = {} as Record<'default' | 'allow' | 'require', RunningGateway>;

beforeAll(async () => {
  petstore = await startPetstore({ dbPath: ':memory:', apiKey: KEY, port: 0 });
  const documents = loadPersistedDocuments(MANIFEST);
  gateways.default = await startGateway({
    upstreamUrl: petstore.url,
    gateway: { automaticPersistedQueries: createMemoryDocumentStore() },
  });
  gateways.allow = await startGateway({
    upstreamUrl: petstore.url,
    gateway: {
      automaticPersistedQueries: createMemoryDocumentStore(),
      persistedOperations: { mode: 'allow', documents },
    },
  });
  gateways.require = await startGateway({
    upstreamUrl: petstore.url,
    gateway: { persistedOperations: { mode: 'require', documents } },
  });
});

afterAll(async () => {
  for (const gateway of Object.values(gateways)) await gateway.close();
  await petstore.close();
});

/** One request as the client sent it: method, whether it carried the text, and the hash. */
interface Sent {
  method: string;
  query: boolean;
  hash: string | undefined;
}

/** A fetch that records what goes on the wire, then sends it. */
function recordingFetch(sent: Sent[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    const method = init?.method ?? 'GET';
    const params =
      method === 'GET'
        ? {
            query: url.searchParams.get('query') ?? undefined,
            extensions: JSON.parse(url.searchParams.get('extensions') ?? 'null'),
          }
        : JSON.parse(String(init?.body));
    sent.push({
      method,
      query: typeof params.query === 'string',
      hash: params.extensions?.persistedQuery?.sha256Hash,
    });
    return fetch(input, init);
  };
}

const HASH_ONLY = { query: false, hash: expect.any(String) };
const WITH_TEXT = { query: true, hash: expect.any(String) };

// --- recipe lines (docs/mobile.md quotes these) ---------------------------------------------
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** The id codegen's client preset stamped on a document (its `persistedDocuments` option). */
const manifestId = (document: DocumentNode) =>
  (document as DocumentNode & { __meta__?: { hash?: string } }).__meta__?.hash;
// ---------------------------------------------------------------------------------------------

/** Lists, filters, creates and reads back a pet; returns what each step answered. */
async function petStory(run: {
  query: <T>(document: DocumentNode, variables: Record<string, unknown>) => Promise<T>;
  mutate: <T>(document: DocumentNode, variables: Record<string, unknown>) => Promise<T>;
}) {
  const all = await run.query<{ pets: { id: string; status: string }[] }>(ListPets, { limit: 100 });
  expect(all.pets.length).toBeGreaterThan(20);
  const sold = await run.query<{ pets: { id: string; status: string }[] }>(ListPets, {
    status: 'SOLD',
    limit: 100,
  });
  expect(sold.pets.length).toBeGreaterThan(0);
  expect(sold.pets.every((pet) => pet.status === 'SOLD')).toBe(true);
  const { createPet } = await run.mutate<{ createPet: { id: string; name: string } }>(CreatePet, {
    input: { name: 'Recipe', categoryId: '9223372036854775807', status: 'PENDING' },
  });
  expect(createPet).toMatchObject({ name: 'Recipe' });
  const first = await run.query<{ pet: { id: string; categoryId: string } }>(GetPet, { id: createPet.id });
  const again = await run.query<{ pet: { id: string; categoryId: string } }>(GetPet, { id: createPet.id });
  expect(first.pet).toMatchObject({ id: createPet.id, categoryId: '9223372036854775807' });
  expect(again.pet).toEqual(first.pet);
}

function apollo(link: PersistedQueryLink, gateway: RunningGateway, sent: Sent[]) {
  const client = new ApolloClient({
    link: link.concat(
      new HttpLink({
        uri: gateway.url,
        headers: { authorization: `Bearer ${KEY}` },
        fetch: recordingFetch(sent),
      }),
    ),
    cache: new InMemoryCache(),
  });
  return {
    query: async <T>(query: DocumentNode, variables: Record<string, unknown>) =>
      (await client.query({ query, variables, fetchPolicy: 'network-only' })).data as T,
    mutate: async <T>(mutation: DocumentNode, variables: Record<string, unknown>) =>
      (await client.mutate({ mutation, variables })).data as T,
  };
}

function urql(exchange: ReturnType<typeof persistedExchange>, gateway: RunningGateway, sent: Sent[]) {
  const client = new Client({
    url: gateway.url,
    exchanges: [exchange, fetchExchange],
    fetchOptions: { headers: { authorization: `Bearer ${KEY}` } },
    fetch: recordingFetch(sent),
    requestPolicy: 'network-only',
  });
  const unwrap = <T>(result: { data?: unknown; error?: Error }) => {
    if (result.error) throw result.error;
    return result.data as T;
  };
  return {
    query: async <T>(query: DocumentNode, variables: Record<string, unknown>) =>
      unwrap<T>(await client.query(query, variables).toPromise()),
    mutate: async <T>(mutation: DocumentNode, variables: Record<string, unknown>) =>
      unwrap<T>(await client.mutation(mutation, variables).toPromise()),
  };
}

describe('Apollo Client 4, PersistedQueryLink', () => {
  it('default configuration: the first use registers, later uses send only the hash', async () => {
    const sent: Sent[] = [];
    const link = new PersistedQueryLink({ sha256 });
    await petStory(apollo(link, gateways.default, sent));
    expect(sent).toEqual(
      [
        [HASH_ONLY, WITH_TEXT], // ListPets: not found, then registered
        [HASH_ONLY], // ListPets, filtered: the hash alone
        [HASH_ONLY, WITH_TEXT], // CreatePet
        [HASH_ONLY, WITH_TEXT], // GetPet
        [HASH_ONLY], // GetPet again
      ]
        .flat()
        .map((request) => ({ method: 'POST', ...request })),
    );
  });

  it('default configuration, useGETForHashedQueries: hashed queries go over GET', async () => {
    const sent: Sent[] = [];
    const link = new PersistedQueryLink({ sha256, useGETForHashedQueries: true });
    await petStory(apollo(link, gateways.default, sent));
    // The documents were registered by the test above; the mutation stays a POST.
    expect(sent.map((request) => request.method)).toEqual(['GET', 'GET', 'POST', 'GET', 'GET']);
    expect(sent.every((request) => !request.query)).toBe(true);
  });

  it('allow, with codegen’s manifest ids: one round trip from the first call', async () => {
    const sent: Sent[] = [];
    const link = new PersistedQueryLink({
      generateHash: (document) => manifestId(document) ?? sha256(print(document)),
    });
    await petStory(apollo(link, gateways.allow, sent));
    expect(sent).toHaveLength(5);
    expect(sent.every((request) => !request.query && request.hash?.startsWith('sha256:'))).toBe(true);
  });

  it('require, with codegen’s manifest ids: only ids are sent, and they run', async () => {
    const sent: Sent[] = [];
    const link = new PersistedQueryLink({ generateHash: (document) => manifestId(document) ?? '' });
    await petStory(apollo(link, gateways.require, sent));
    expect(sent).toHaveLength(5);
    expect(sent.every((request) => !request.query)).toBe(true);
  });

  it('require: the default hash (of the text Apollo prints) is refused, with the codes', async () => {
    const link = new PersistedQueryLink({ sha256 });
    const client = apollo(link, gateways.require, []);
    await expect(client.query(ListPets, { limit: 1 })).rejects.toThrow(
      /This gateway runs only persisted operations/,
    );
  });
});

describe('urql, persistedExchange', () => {
  it('default configuration: the first use registers, later uses send only the hash (GET)', async () => {
    const sent: Sent[] = [];
    await petStory(urql(persistedExchange(), gateways.default, sent));
    expect(sent).toEqual([
      { method: 'GET', ...HASH_ONLY }, // ListPets: not found
      { method: 'GET', ...WITH_TEXT }, // registered (urql retries within the URL limit over GET)
      { method: 'GET', ...HASH_ONLY }, // ListPets, filtered
      { method: 'POST', query: true, hash: undefined }, // CreatePet: urql persists queries only
      { method: 'GET', ...HASH_ONLY },
      { method: 'GET', ...WITH_TEXT },
      { method: 'GET', ...HASH_ONLY },
    ]);
  });

  it('allow, with codegen’s manifest ids, mutations too: one round trip from the first call', async () => {
    const sent: Sent[] = [];
    const exchange = persistedExchange({
      enableForMutation: true,
      generateHash: async (text, document) => manifestId(document) ?? sha256(text),
    });
    await petStory(urql(exchange, gateways.allow, sent));
    expect(sent).toHaveLength(5);
    expect(sent.every((request) => !request.query && request.hash?.startsWith('sha256:'))).toBe(true);
  });

  it('require, with codegen’s manifest ids: only ids are sent, and they run', async () => {
    const sent: Sent[] = [];
    const exchange = persistedExchange({
      enforcePersistedQueries: true,
      enableForMutation: true,
      generateHash: async (_text, document) => manifestId(document) ?? '',
    });
    await petStory(urql(exchange, gateways.require, sent));
    expect(sent).toHaveLength(5);
    expect(sent.every((request) => !request.query)).toBe(true);
  });
});
