// @tier integration

import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { loadConfig } from '../../src/config.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';
import { listCallsOf, petNames, postToRest } from '../support/live.ts';
import { type SseSubscription, subscribeSse } from '../support/sse.ts';

// subscription { pets }: the list now, then the list each time it changes, over a REST service
// that has no events. One poll per (key, arguments) for all who watch it; a create through the
// gateway is seen at once.

const ALICE = 'live-alice';
const BOB = 'live-bob';
const POLL_MS = 1000;
const LIST = 'subscription Live($limit: Int) { pets(limit: $limit) { id name } }';

let upstream: FakeUpstream;
let gateway: RunningGateway;
const metrics = createMetrics();
const open: SseSubscription[] = [];

const live = (overrides: Partial<NonNullable<ReturnType<typeof loadConfig>['live']>> = {}) => ({
  live: {
    pollMs: POLL_MS,
    maxPerKey: 10,
    maxStreams: 2000,
    slowReaderMs: 30_000,
    store: 'memory' as const,
    ...overrides,
  },
});

async function subscribe(
  key: string,
  variables: Record<string, unknown> = { limit: 100 },
  url = gateway.url,
) {
  const subscription = await subscribeSse(url, { query: LIST, variables }, `Bearer ${key}`);
  open.push(subscription);
  return subscription;
}

const names = petNames;
const listCalls = (key: string) => listCallsOf(upstream, key);

beforeAll(async () => {
  upstream = await startFakeUpstream();
  for (const key of [ALICE, BOB]) upstream.tokens.add(key);
  upstream.seed(ALICE, { id: '1', name: 'Rex', categoryId: '1' });
  upstream.seed(BOB, { id: '7', name: 'Bob’s cat', categoryId: '1' });
  gateway = await startGateway({ upstreamUrl: upstream.url, config: live() });
  if (gateway.live) metrics.watchLive(gateway.live.stats);
});
afterAll(async () => {
  for (const subscription of open) subscription.close();
  await gateway.close();
  await upstream.close();
});
beforeEach(() => {
  for (const subscription of open.splice(0)) subscription.close();
  upstream.clearFaults();
});

describe('subscription { pets }', () => {
  it('sends the current list first, as the pets query answers it', async () => {
    const query = await post(
      gateway.url,
      { query: '{ pets(limit: 100) { id name } }' },
      { authorization: `Bearer ${ALICE}` },
    );
    const subscription = await subscribe(ALICE);
    expect(subscription.status).toBe(200);
    await subscription.waitForEvents(1);
    expect(subscription.events[0]).toEqual(query.body);
  });

  it('takes its status as a variable, as a client such as urql sends it, and answers as the query does', async () => {
    const document = '($status: PetStatus, $limit: Int) { pets(status: $status, limit: $limit) { id name } }';
    const variables = { status: 'AVAILABLE', limit: 100 };
    const query = await post(
      gateway.url,
      { query: `query ByStatus${document}`, variables },
      { authorization: `Bearer ${ALICE}` },
    );
    expect(query.body).not.toHaveProperty('errors');
    const subscription = await subscribeSse(
      gateway.url,
      { query: `subscription ByStatus${document}`, variables },
      `Bearer ${ALICE}`,
    );
    open.push(subscription);
    await subscription.waitForEvents(1);
    expect(subscription.events[0]).toEqual(query.body);
  });

  it('sends a pet posted straight to the REST service within one poll, and nothing while nothing changes', async () => {
    const subscription = await subscribe(ALICE, { limit: 50 });
    await subscription.waitForEvents(1);
    const before = listCalls(ALICE);
    // Three polls with the same answer: no event.
    await new Promise((resolve) => setTimeout(resolve, 3 * POLL_MS + 300));
    expect(listCalls(ALICE) - before).toBeGreaterThanOrEqual(3);
    expect(subscription.events).toHaveLength(1);
    await postToRest(upstream.url, ALICE, 'Straight to REST');
    await subscription.waitForEvents(2, POLL_MS + 2000);
    expect(names(subscription.events[1])).toContain('Straight to REST');
  });

  it('asks the upstream once per interval for twenty subscribers of one key and arguments', async () => {
    const twenty = await Promise.all(Array.from({ length: 10 }, () => subscribe(BOB, { limit: 7 })));
    await Promise.all(twenty.map((subscription) => subscription.waitForEvents(1)));
    const before = listCalls(BOB);
    await new Promise((resolve) => setTimeout(resolve, 2 * POLL_MS + 200));
    const polls = listCalls(BOB) - before;
    expect(polls).toBeGreaterThanOrEqual(1);
    expect(polls).toBeLessThanOrEqual(3);
  });

  it('never shows one key’s pets to another', async () => {
    const alice = await subscribe(ALICE, { limit: 30 });
    const bob = await subscribe(BOB, { limit: 30 });
    await Promise.all([alice.waitForEvents(1), bob.waitForEvents(1)]);
    expect(names(alice.events[0])).not.toContain('Bob’s cat');
    expect(names(bob.events[0])).toEqual(['Bob’s cat']);
    await postToRest(upstream.url, BOB, 'Only Bob’s');
    await bob.waitForEvents(2, POLL_MS + 2000);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    expect(alice.events.flatMap(names)).not.toContain('Only Bob’s');
  });

  it('sends an upstream failure as an event with the upstream’s code, and goes on polling', async () => {
    const subscription = await subscribe(ALICE, { limit: 40 });
    await subscription.waitForEvents(1);
    upstream.fault(
      /^\/v1\/pets\?limit=40/,
      (_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"code":"SOMETHING_ODD","message":"odd","status":400}');
      },
      1,
    );
    await subscription.waitForEvents(2, POLL_MS + 2000);
    expect(subscription.events[1]?.errors?.[0]?.extensions?.code).toBe('SOMETHING_ODD');
    await postToRest(upstream.url, ALICE, 'After the failure');
    await subscription.waitForEvents(3, 2 * POLL_MS + 2000);
    expect(names(subscription.events[2])).toContain('After the failure');
    expect(subscription.ended).toBe(false);
  });

  it('ends the stream with UNAUTHENTICATED when the upstream refuses the key', async () => {
    const subscription = await subscribe('live-unknown-key');
    await subscription.waitForEnd(POLL_MS + 2000);
    expect(subscription.events.at(-1)?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('refuses a subscription without a usable key before watching anything', async () => {
    const subscription = await subscribeSse(gateway.url, { query: LIST, variables: { limit: 3 } });
    open.push(subscription);
    await subscription.waitForEnd();
    expect(subscription.events[0]?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('refuses an argument the query would refuse, with the same error', async () => {
    // 101 is within MAX_COST (a larger limit is refused for its cost first, as the query is).
    const subscription = await subscribe(ALICE, { limit: 101 });
    await subscription.waitForEnd();
    expect(subscription.events[0]?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('reports the open streams in /health and /readiness, which a drain will end', async () => {
    const before = (await (await fetch(`${gateway.origin}/health`)).json()) as {
      streams: { subscriptions: number };
    };
    const subscription = await subscribe(ALICE, { limit: 70 });
    await subscription.waitForEvents(1);
    const health = (await (await fetch(`${gateway.origin}/health`)).json()) as {
      streams: { subscriptions: number; webSockets: number };
    };
    expect(health.streams.subscriptions).toBe(before.streams.subscriptions + 1);
    expect(health.streams.webSockets).toBe(0);
    const readiness = (await (await fetch(`${gateway.origin}/readiness`)).json()) as { streams: unknown };
    expect(readiness.streams).toEqual(health.streams);
  });

  it('counts open subscriptions, polls and changes in /metrics', async () => {
    const subscription = await subscribe(ALICE, { limit: 60 });
    await subscription.waitForEvents(1);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^pet_gateway_live_subscriptions [1-9]/m);
    expect(text).toMatch(/^pet_gateway_live_polls_total [1-9]/m);
    expect(text).toMatch(/^pet_gateway_live_changes_sent_total [1-9]/m);
  });
});

describe('a create through the gateway', () => {
  let slow: RunningGateway;
  beforeAll(async () => {
    slow = await startGateway({ upstreamUrl: upstream.url, config: live({ pollMs: 30_000, maxPerKey: 2 }) });
  });
  afterAll(async () => {
    await slow.close();
  });

  it('reaches the caller’s live lists within a second, with LIVE_POLL_MS=30000', async () => {
    const subscription = await subscribe(ALICE, { limit: 100 }, slow.url);
    await subscription.waitForEvents(1);
    const started = performance.now();
    const created = await post(
      slow.url,
      { query: 'mutation { createPet(input: { name: "Through the gateway", categoryId: "1" }) { id } }' },
      { authorization: `Bearer ${ALICE}` },
    );
    expect(created.status).toBe(200);
    await subscription.waitForEvents(2, 1000);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(names(subscription.events[1])).toContain('Through the gateway');
  });

  it('refuses a key’s subscription past LIVE_MAX_PER_KEY with its own code', async () => {
    for (const subscription of open.splice(0)) subscription.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const first = await subscribe(BOB, { limit: 1 }, slow.url);
    const second = await subscribe(BOB, { limit: 2 }, slow.url);
    await Promise.all([first.waitForEvents(1), second.waitForEvents(1)]);
    const third = await subscribe(BOB, { limit: 3 }, slow.url);
    await third.waitForEnd();
    expect(third.events[0]?.errors?.[0]?.extensions?.code).toBe('SUBSCRIPTION_LIMIT_EXCEEDED');
    // Another key is not held back by Bob's.
    const alice = await subscribe(ALICE, { limit: 3 }, slow.url);
    await alice.waitForEvents(1);
    expect(alice.events[0]?.errors).toBeUndefined();
  });
});

describe('the log of a subscription', () => {
  it('names the operation a subscription, and writes a line when it ends', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const logged = await startGateway({
      upstreamUrl: upstream.url,
      config: live(),
      gateway: { logger: pino({ level: 'info' }, sink) },
    });
    try {
      const subscription = await subscribeSse(
        logged.url,
        { query: LIST, variables: { limit: 80 } },
        `Bearer ${ALICE}`,
      );
      await subscription.waitForEvents(1);
      subscription.close();
      await expect
        .poll(() => lines.some((line) => line.msg === 'subscription ended'), { timeout: 3000 })
        .toBe(true);
      const operation = lines.find((line) => line.msg === 'operation' && line.operationName === 'Live');
      expect(operation).toMatchObject({ operationType: 'subscription', status: 200, outcome: 'ok' });
      expect(lines.find((line) => line.msg === 'subscription ended')).toMatchObject({
        subscription: 'pets',
        limit: 80,
        reason: 'client',
        events: 1,
      });
    } finally {
      await logged.close();
    }
  });
});
