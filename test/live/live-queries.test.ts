// @tier integration

import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type loadConfig } from '../../src/config.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';
import { createThroughGateway, listCallsOf, petNames, postToRest } from '../support/live.ts';
import { type SseSubscription, subscribeSse } from '../support/sse.ts';

// `@live` on any query: its result now, then again each time it changes. A write through the
// gateway wakes it at once; a change on the REST service is seen by the next shared poll. Every
// bound of live lists holds, since both are watches of one hub.

const ALICE = 'live-query-alice';
const BOB = 'live-query-bob';
const CAROL = 'live-query-carol';
const QUICK_POLL_MS = 300;
const LIST = 'query Pets @live { pets(limit: 100) { id name } }';

let upstream: FakeUpstream;
/** Polls once a minute: a result within a second of a write can only come from its wake. */
let slow: RunningGateway;
/** Polls often: a change on the REST service is seen within a poll. */
let quick: RunningGateway;
const open: SseSubscription[] = [];

const live = (pollMs: number, maxPerKey = 10): Partial<ReturnType<typeof loadConfig>> => ({
  live: { pollMs, maxPerKey, maxStreams: 2000, slowReaderMs: 30_000, store: 'memory' },
});

async function watch(
  gateway: RunningGateway,
  key: string,
  query = LIST,
  variables?: Record<string, unknown>,
) {
  const subscription = await subscribeSse(
    gateway.url,
    { query, ...(variables ? { variables } : {}) },
    `Bearer ${key}`,
  );
  open.push(subscription);
  return subscription;
}

const names = petNames;
const listCalls = (key: string) => listCallsOf(upstream, key);

beforeAll(async () => {
  upstream = await startFakeUpstream();
  for (const key of [ALICE, BOB, CAROL]) upstream.tokens.add(key);
  upstream.seed(ALICE, { id: '1', name: 'Rex', categoryId: '1' });
  upstream.seed(BOB, { id: '7', name: 'Tom', categoryId: '1' });
  slow = await startGateway({ upstreamUrl: upstream.url, config: live(60_000, 3) });
  quick = await startGateway({ upstreamUrl: upstream.url, config: live(QUICK_POLL_MS) });
});
afterAll(async () => {
  for (const subscription of open) subscription.close();
  await slow.close();
  await quick.close();
  await upstream.close();
});
beforeEach(() => {
  for (const subscription of open.splice(0)) subscription.close();
  upstream.clearFaults();
});

describe('query @live over SSE', () => {
  it('sends the result now, byte for byte what the query without @live answers', async () => {
    const plain = await post(
      slow.url,
      { query: LIST.replace(' @live', '') },
      { authorization: `Bearer ${ALICE}` },
    );
    const subscription = await watch(slow, ALICE);
    expect(subscription.status).toBe(200);
    expect(subscription.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await subscription.waitForEvents(1);
    expect(subscription.events[0]).toEqual(plain.body);
  });

  it('sends a new result at once after a create through the gateway, one poll for all who watch it', async () => {
    const first = await watch(slow, ALICE);
    const second = await watch(slow, ALICE);
    await first.waitForEvents(1);
    await second.waitForEvents(1);
    const before = listCalls(ALICE);
    await createThroughGateway(slow.url, ALICE, 'Fido');
    await first.waitForEvents(2, 2000);
    await second.waitForEvents(2, 2000);
    expect(names(first.events[1])).toContain('Fido');
    expect(names(second.events[1])).toEqual(names(first.events[1]));
    // One GET /pets after the create for both subscribers: they share the watch.
    expect(listCalls(ALICE) - before).toBe(1);
  });

  it("does not wake another key's watch on a create, nor send it anything", async () => {
    const bobs = await watch(slow, BOB);
    await bobs.waitForEvents(1);
    const before = listCalls(BOB);
    await createThroughGateway(slow.url, ALICE, 'Only Alice');
    const alices = await watch(slow, ALICE);
    await alices.waitForEvents(1);
    expect(names(alices.events[0])).toContain('Only Alice');
    expect(listCalls(BOB)).toBe(before);
    expect(bobs.events).toHaveLength(1);
  });

  it('sees a change made on the REST service within one poll, and sends nothing while nothing changes', async () => {
    const subscription = await watch(quick, BOB);
    await subscription.waitForEvents(1);
    const polls = listCalls(BOB);
    await new Promise((resolve) => setTimeout(resolve, QUICK_POLL_MS * 3));
    expect(listCalls(BOB)).toBeGreaterThan(polls);
    expect(subscription.events).toHaveLength(1);
    await postToRest(upstream.url, BOB, 'Straight to REST');
    await subscription.waitForEvents(2, QUICK_POLL_MS * 10);
    expect(names(subscription.events[1])).toContain('Straight to REST');
  });

  it('watches pet(id), with its deprecation notice on every result and its headers', async () => {
    const subscription = await watch(slow, ALICE, 'query One @live { pet(id: "1") { id name } }');
    await subscription.waitForEvents(1);
    expect(subscription.events[0]).toMatchObject({
      data: { pet: { id: '1', name: 'Rex' } },
      extensions: { deprecations: [{ field: 'Query.pet', replacement: 'Query.pets' }] },
    });
    expect(subscription.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(subscription.headers.get('sunset')).toBeTruthy();
  });

  it('takes variables, and watches each set of them apart', async () => {
    const query = 'query ByLimit($limit: Int) @live { pets(limit: $limit) { name } }';
    const one = await watch(slow, ALICE, query, { limit: 1 });
    const all = await watch(slow, ALICE, query, { limit: 100 });
    await one.waitForEvents(1);
    await all.waitForEvents(1);
    expect(names(one.events[0])).toEqual(['Rex']);
    expect(names(all.events[0]).length).toBeGreaterThan(1);
  });

  it('streams it as SSE to a client that also lists multipart/mixed, as urql does', async () => {
    const response = await fetch(slow.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${ALICE}`,
        accept:
          'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed',
      },
      body: JSON.stringify({ query: LIST }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await response.body?.cancel();
  });

  it('streams it over GET, as GraphiQL sends a live query, with no ETag on a stream', async () => {
    const url = `${slow.url}?query=${encodeURIComponent(LIST)}`;
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${ALICE}`, accept: 'text/event-stream' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('etag')).toBeNull();
    const reader = response.body?.getReader();
    let text = '';
    while (!text.includes('event: next')) text += new TextDecoder().decode((await reader?.read())?.value);
    expect(text).toContain('"name":"Rex"');
    await reader?.cancel();
  });

  it('answers @live(if: false) as a plain query', async () => {
    const answer = await post(
      slow.url,
      { query: 'query Off @live(if: false) { pets(limit: 1) { name } }' },
      { authorization: `Bearer ${ALICE}` },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { pets: [{ name: 'Rex' }] } });
  });
});

describe('a live query the gateway cannot serve says why', () => {
  it('refuses a client that accepts no event stream, before anything is watched', async () => {
    const answer = await post(slow.url, { query: LIST }, { authorization: `Bearer ${CAROL}` });
    expect(answer.status).toBe(406);
    expect(answer.body).toMatchObject({ errors: [{ extensions: { code: 'SUBSCRIPTION_NEEDS_STREAM' } }] });
    expect(slow.live?.stats.open).toBe(0);
  });

  it('refuses it inside a batch', async () => {
    const answer = await post(slow.url, [{ query: LIST }, { query: '{ __typename }' }], {
      authorization: `Bearer ${CAROL}`,
      accept: 'text/event-stream, application/json',
    });
    expect(answer.body).toMatchObject([
      { errors: [{ extensions: { code: 'SUBSCRIPTION_NEEDS_STREAM' } }] },
      { data: { __typename: 'Query' } },
    ]);
  });

  it.each([
    [
      '@live with @defer or @stream, which would answer in parts of parts',
      'query D @live { pets(limit: 1) { id ... @defer { name } } }',
    ],
    ['a query that reads nothing from the store, which could never change', 'query T @live { __typename }'],
  ])('refuses %s', async (_what, query) => {
    const subscription = await watch(slow, CAROL, query);
    await subscription.waitForEnd();
    expect(subscription.status).toBe(400);
    expect(subscription.events[0]).toMatchObject({
      errors: [{ extensions: { code: 'LIVE_QUERY_NOT_WATCHABLE' } }],
    });
  });

  it('refuses a request without a usable key, before anything is watched', async () => {
    const subscription = await subscribeSse(slow.url, { query: LIST });
    open.push(subscription);
    await subscription.waitForEnd();
    // As the table of codes says: a field's error, answered beside no data.
    expect(subscription.status).toBe(200);
    expect(subscription.events).toEqual([
      { errors: [expect.objectContaining({ extensions: { code: 'UNAUTHENTICATED', status: 401 } })] },
    ]);
    expect(slow.live?.stats.open).toBe(0);
  });

  it('refuses it on a gateway started with LIVE=off, saying so', async () => {
    const off = await startGateway({ upstreamUrl: upstream.url, config: { live: undefined } });
    try {
      const subscription = await watch(off, CAROL);
      await subscription.waitForEnd();
      expect(subscription.status).toBe(400);
      expect(subscription.events[0]).toMatchObject({
        errors: [
          {
            message: 'This gateway serves no live queries (LIVE=off).',
            extensions: { code: 'SUBSCRIPTION_NOT_SUPPORTED' },
          },
        ],
      });
    } finally {
      await off.close();
    }
  });

  it('refuses @live on a mutation or a subscription at validation', async () => {
    const answer = await post(
      slow.url,
      { query: 'mutation M @live { createPet(input: { name: "x", categoryId: "1" }) { id } }' },
      { authorization: `Bearer ${CAROL}`, accept: 'text/event-stream' },
    );
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('Directive \\"@live\\" may not be used on MUTATION.');
  });
});

describe('the bounds of live lists hold for live queries', () => {
  it('counts live queries and subscriptions together against LIVE_MAX_PER_KEY', async () => {
    const held = [
      await watch(slow, CAROL),
      await watch(slow, CAROL, 'query Other @live { pets(limit: 2) { id } }'),
      await subscribeSse(slow.url, { query: 'subscription { pets(limit: 3) { id } }' }, `Bearer ${CAROL}`),
    ];
    open.push(held[2] as SseSubscription);
    for (const subscription of held) await subscription.waitForEvents(1);
    const refused = await watch(slow, CAROL, 'query Fourth @live { pets(limit: 4) { id } }');
    await refused.waitForEnd();
    expect(refused.status).toBe(429);
    expect(refused.events[0]).toMatchObject({
      errors: [{ extensions: { code: 'SUBSCRIPTION_LIMIT_EXCEEDED' } }],
    });
  });

  it('frees its slot and stops its poll as soon as its client leaves', async () => {
    const subscription = await watch(slow, ALICE);
    await subscription.waitForEvents(1);
    const held = slow.live?.stats.open ?? 0;
    expect(held).toBeGreaterThan(0);
    subscription.close();
    await expect.poll(() => slow.live?.stats.open, { timeout: 2000 }).toBe(held - 1);
  });

  it('holds nothing for clients that vanish: 200 opened and dropped leave no slot and no poll', async () => {
    const key = 'live-query-vanishing';
    upstream.tokens.add(key);
    for (let round = 0; round < 20; round++) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          watch(quick, key, `query V${i} @live { pets(limit: ${i + 1}) { id } }`),
        ),
      );
      // Half leave before their first result, half after it.
      await Promise.all(batch.slice(5).map((subscription) => subscription.waitForEvents(1)));
      for (const subscription of batch) subscription.close();
      await expect.poll(() => quick.live?.stats.open, { timeout: 2000 }).toBe(0);
    }
    const calls = listCalls(key);
    await new Promise((resolve) => setTimeout(resolve, QUICK_POLL_MS * 4));
    expect(listCalls(key)).toBe(calls);
  });

  it('ends the stream with UNAUTHENTICATED when the REST service stops taking the key', async () => {
    const key = 'live-query-revoked';
    upstream.tokens.add(key);
    const subscription = await watch(quick, key);
    await subscription.waitForEvents(1);
    upstream.tokens.delete(key);
    await subscription.waitForEnd(QUICK_POLL_MS * 10);
    expect(subscription.events.at(-1)).toMatchObject({
      errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
    });
  });
});

describe('query @live with COST_REPORT=on', () => {
  it('says what each result cost, as the query and a subscription do: the first, byte for byte the query', async () => {
    const gateway = await startGateway({
      upstreamUrl: upstream.url,
      config: live(60_000),
      limits: { ...DEFAULT_LIMITS, costReport: true },
    });
    try {
      const plain = await post(
        gateway.url,
        { query: LIST.replace(' @live', '') },
        { authorization: `Bearer ${BOB}` },
      );
      expect(plain.body).toMatchObject({ extensions: { cost: { estimated: expect.any(Number) } } });
      const subscription = await watch(gateway, BOB);
      await subscription.waitForEvents(1);
      expect(subscription.events[0]).toEqual(plain.body);
      await createThroughGateway(gateway.url, BOB, 'Priced');
      await subscription.waitForEvents(2, 2000);
      const { estimated, actual } = (
        subscription.events[1] as { extensions: { cost: Record<string, number> } }
      ).extensions.cost;
      expect([estimated, actual]).toEqual([
        (plain.body as { extensions: { cost: { estimated: number } } }).extensions.cost.estimated,
        expect.any(Number),
      ]);
    } finally {
      for (const subscription of open.splice(0)) subscription.close();
      await gateway.close();
    }
  });
});

describe('query @live over graphql-ws', () => {
  it('sends the result, then a new one after a create through the gateway', async () => {
    const client = createClient({
      url: slow.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${BOB}` },
      retryAttempts: 0,
    });
    const results: string[][] = [];
    let wake: (() => void) | undefined;
    const stop = client.subscribe(
      { query: LIST },
      {
        next: (result) => {
          results.push(names(result as SseSubscription['events'][number]));
          wake?.();
        },
        error: () => {},
        complete: () => {},
      },
    );
    const until = (count: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`results: ${JSON.stringify(results)}`)), 3000);
        wake = () => {
          if (results.length < count) return;
          clearTimeout(timer);
          resolve();
        };
        wake();
      });
    try {
      await until(1);
      expect(results[0]).toContain('Tom');
      await createThroughGateway(slow.url, BOB, 'Over a socket');
      await until(2);
      expect(results[1]).toContain('Over a socket');
    } finally {
      stop();
      await client.dispose();
    }
  });
});
