// @tier integration

import { ApolloClient, gql, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { Client, fetchExchange } from '@urql/core';
import { createClient } from 'graphql-ws';
import { describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { createThroughGateway, postToRest } from '../support/live.ts';

// The clients front ends ship, subscribed to live pets: Apollo Client 4 over graphql-ws
// (GraphQLWsLink, the key in connectionParams as a browser must send it) and urql over SSE. Each
// sees a pet created through the gateway and one created on the REST service directly.

const KEY = 'live-clients-key';
const POLL_MS = 1000;
const PETS = 'subscription Live { pets(limit: 100) { id name } }';

let upstream: FakeUpstream;
let gateway: RunningGateway;

useGateway(
  {
    tokens: [KEY],
    seed: (u) => u.seed(KEY, { id: '1', name: 'Rex', categoryId: '1' }),
    gateway: {
      config: {
        live: { pollMs: POLL_MS, maxPerKey: 10, maxStreams: 100, slowReaderMs: 30_000, store: 'memory' },
      },
    },
  },
  (started) => {
    ({ upstream, gateway } = started);
  },
);

/** Collects the names of each list a subscription receives; resolves `until` a list holds `name`. */
function collector() {
  const lists: string[][] = [];
  const waiting = new Map<string, () => void>();
  return {
    lists,
    /** Takes one result as a client hands it over: its pets' names. */
    add(result: { data?: unknown }) {
      const names = ((result.data as { pets?: Array<{ name: string }> } | undefined)?.pets ?? []).map(
        (pet) => pet.name,
      );
      lists.push(names);
      for (const [name, resolve] of waiting) if (names.includes(name)) resolve();
    },
    until(name: string, timeoutMs: number) {
      if (lists.some((names) => names.includes(name))) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${name} not seen in ${timeoutMs} ms: ${JSON.stringify(lists)}`)),
          timeoutMs,
        );
        waiting.set(name, () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/**
 * What every client is held to: the list as it is, a pet created through the gateway at once, and
 * one created on the REST service within a poll. `label` names the pets it creates.
 */
async function seesEveryChange(seen: ReturnType<typeof collector>, label: string) {
  await seen.until('Rex', 3000);
  await createThroughGateway(gateway.url, KEY, `${label} through the gateway`);
  await seen.until(`${label} through the gateway`, 1000);
  await postToRest(upstream.url, KEY, `${label} on REST`);
  await seen.until(`${label} on REST`, POLL_MS + 2000);
}

describe('Apollo Client 4 over graphql-ws', () => {
  it('lists pets live: a create through the gateway at once, one on the REST service within a poll', async () => {
    const wsClient = createClient({
      url: gateway.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${KEY}` },
      retryAttempts: 0,
    });
    const client = new ApolloClient({ cache: new InMemoryCache(), link: new GraphQLWsLink(wsClient) });
    const seen = collector();
    const subscription = client.subscribe({ query: gql(PETS) }).subscribe({
      next: (result) => seen.add(result),
    });
    try {
      await seesEveryChange(seen, 'Apollo');
    } finally {
      subscription.unsubscribe();
      await wsClient.dispose();
    }
  });

  it('keeps a `@live` query true through watchQuery: each result over the socket updates its cache', async () => {
    const wsClient = createClient({
      url: gateway.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${KEY}` },
      retryAttempts: 0,
    });
    const client = new ApolloClient({ cache: new InMemoryCache(), link: new GraphQLWsLink(wsClient) });
    const seen = collector();
    const watched = client
      .watchQuery({ query: gql('query LiveNames @live { pets(limit: 100) { id name } }') })
      .subscribe({
        next: (result) => seen.add(result),
      });
    try {
      await seesEveryChange(seen, 'Apollo live');
    } finally {
      watched.unsubscribe();
      await wsClient.dispose();
    }
  });

  it('closes a socket whose connection_init carries no key with 4403, naming connectionParams', async () => {
    let closed: { code: number; reason: string } | undefined;
    const wsClient = createClient({
      url: gateway.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      on: { closed: (event) => (closed = event as { code: number; reason: string }) },
    });
    try {
      const error = await new Promise<unknown>((resolve) =>
        wsClient.subscribe({ query: PETS }, { next: () => {}, error: resolve, complete: () => {} }),
      );
      expect(error).toMatchObject({ code: 4403 });
      expect(closed).toMatchObject({
        code: 4403,
        reason: 'connectionParams.authorization must be "Bearer <API key>"',
      });
    } finally {
      await wsClient.dispose();
    }
  });
});

describe('a graphql-ws subscription ends when its client is done with it', () => {
  const subscriptions = async () =>
    ((await (await fetch(`${gateway.origin}/health`)).json()) as { streams: { subscriptions: number } })
      .streams.subscriptions;
  /** Polls /health until the count is `expected` or a second has passed; the last count. */
  const settlesAt = async (expected: number) => {
    let count = await subscriptions();
    for (let i = 0; i < 20 && count !== expected; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      count = await subscriptions();
    }
    return count;
  };
  /** Opens a subscription on a socket of its own; resolves once its first list arrived. */
  const open = async () => {
    const wsClient = createClient({
      url: gateway.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${KEY}` },
      retryAttempts: 0,
      lazy: false,
    });
    let unsubscribe = () => {};
    await new Promise<void>((resolve, reject) => {
      unsubscribe = wsClient.subscribe(
        { query: PETS },
        { next: () => resolve(), error: reject, complete: () => {} },
      );
    });
    return { wsClient, unsubscribe };
  };

  it('on `complete` (the client unsubscribes): the watch is released at once, the socket stays', async () => {
    const before = await subscriptions();
    const { wsClient, unsubscribe } = await open();
    try {
      expect(await subscriptions()).toBe(before + 1);
      unsubscribe();
      expect(await settlesAt(before)).toBe(before);
    } finally {
      await wsClient.dispose();
    }
  });

  it('when the socket closes: every watch on it is released', async () => {
    const before = await subscriptions();
    const { wsClient } = await open();
    expect(await subscriptions()).toBe(before + 1);
    await wsClient.dispose();
    expect(await settlesAt(before)).toBe(before);
  });
});

describe('urql over SSE', () => {
  it('lists pets live from a text/event-stream subscription', async () => {
    const client = new Client({
      url: gateway.url,
      exchanges: [fetchExchange],
      fetchSubscriptions: true,
      fetchOptions: { headers: { authorization: `Bearer ${KEY}` } },
    });
    const seen = collector();
    const { unsubscribe } = client.subscription(PETS, {}).subscribe((result) => {
      seen.add(result);
    });
    try {
      await seesEveryChange(seen, 'urql');
    } finally {
      unsubscribe();
    }
  });

  it('keeps a `@live` query true: its fetch reads the streamed answer, result by result', async () => {
    const client = new Client({
      url: gateway.url,
      exchanges: [fetchExchange],
      fetchOptions: { headers: { authorization: `Bearer ${KEY}` } },
    });
    const seen = collector();
    const { unsubscribe } = client
      .query('query LiveNames @live { pets(limit: 100) { id name } }', {})
      .subscribe((result) => {
        seen.add(result);
      });
    try {
      await seesEveryChange(seen, 'urql live');
    } finally {
      unsubscribe();
    }
  });
});

describe('the WebSocket upgrade', () => {
  const open = (headers: Record<string, string>, protocol = 'graphql-transport-ws', path = '/graphql') =>
    new Promise<number>((resolve) => {
      const ws = new WebSocket(gateway.origin.replace(/^http/, 'ws') + path, protocol, { headers });
      ws.on('open', () => {
        ws.close();
        resolve(101);
      });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => {});
    });

  it('opens /graphql with graphql-ws’s subprotocol, and refuses other paths and protocols', async () => {
    expect(await open({})).toBe(101);
    expect(await open({}, 'graphql-transport-ws', '/other')).toBe(404);
    expect(await open({}, 'graphql-ws')).toBe(400);
  });

  it('closes a socket whose message is over MAX_BODY_BYTES with 1009, and writes no stack anywhere', async () => {
    const consoleError = vi.spyOn(console, 'error');
    try {
      const ws = new WebSocket(`${gateway.origin.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
      ws.on('error', () => {});
      await new Promise((resolve) => ws.on('open', resolve));
      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      ws.send(
        JSON.stringify({
          type: 'connection_init',
          payload: { big: 'x'.repeat(DEFAULT_LIMITS.maxBodyBytes) },
        }),
      );
      expect(await closed).toBe(1009);
      // Let any late listener speak before checking that none did.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
    }
  });
});
