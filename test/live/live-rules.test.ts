// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { createRateLimit, type RateLimit } from '../../src/policy/rate-limit.ts';
import { loadPersistedDocuments } from '../../src/yoga/request/persisted-documents.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { subscribeSse } from '../support/sse.ts';

// A subscription or a live query is one more way in: the rules of a single request hold when it
// opens (the rate limit counts it, trusted documents and the cost refuse it), before anything is
// watched.

const KEY = 'live-rules-key';
const MANIFEST = new URL('../generated/persisted-documents.json', import.meta.url).pathname;
const LIVE = {
  live: { pollMs: 30_000, maxPerKey: 10, maxStreams: 100, slowReaderMs: 30_000, store: 'memory' as const },
};
const LIST = 'subscription { pets(limit: 5) { id } }';
/** The same list as a live query: the same rules, written once below both. */
const LIVE_LIST = 'query Watched @live { pets(limit: 5) { id } }';
/** `query ListPetsDefault { pets { id } }` in the manifest. */
const LIST_DEFAULT = 'sha256:f9ff0240f6dcb07ebde67938511f0b76e77a85fb3a2a0af8e1435c66568a1dcd';

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(KEY);
});
afterAll(async () => {
  await upstream.close();
});

const firstCode = async (url: string, query: string) => {
  const subscription = await subscribeSse(url, { query }, `Bearer ${KEY}`);
  try {
    await subscription.waitForEvents(1);
    return subscription.events[0]?.errors?.[0]?.extensions?.code ?? 'ok';
  } finally {
    subscription.close();
  }
};

describe('a subscription under the per-key rate limit', () => {
  let gateway: RunningGateway;
  let limit: RateLimit;
  beforeAll(async () => {
    limit = createRateLimit({ perMinute: 2 });
    gateway = await startGateway({ upstreamUrl: upstream.url, config: LIVE, gateway: { rateLimit: limit } });
  });
  afterAll(async () => {
    await gateway.close();
    await limit.close();
  });

  it('counts once when it opens, a live query too: the third of RATE_LIMIT_PER_MINUTE=2 is RATE_LIMITED', async () => {
    expect([await firstCode(gateway.url, LIVE_LIST), await firstCode(gateway.url, LIST)]).toEqual([
      'ok',
      'ok',
    ]);
    expect(await firstCode(gateway.url, LIST)).toBe('RATE_LIMITED');
    expect(await firstCode(gateway.url, LIVE_LIST)).toBe('RATE_LIMITED');
  });
});

describe('a subscription with trusted documents required', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      config: LIVE,
      gateway: { persistedOperations: { mode: 'require', documents: loadPersistedDocuments(MANIFEST) } },
    });
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('is refused as text, as any operation is, with nothing watched', async () => {
    const polls = upstream.requests.length;
    expect(await firstCode(gateway.url, LIST)).toBe('PERSISTED_OPERATION_REQUIRED');
    expect(await firstCode(gateway.url, LIVE_LIST)).toBe('PERSISTED_OPERATION_REQUIRED');
    expect(upstream.requests.length).toBe(polls);
    expect(gateway.live?.stats.open).toBe(0);
  });

  it('runs an operation sent over graphql-ws by its document id alone, with no query text', async () => {
    const ws = new WebSocket(`${gateway.origin.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const messages: Array<{ type: string; payload?: { data?: unknown } }> = [];
    const closed = new Promise<number>((resolve) => ws.on('close', resolve));
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as (typeof messages)[number];
      messages.push(message);
      if (message.type === 'connection_ack')
        ws.send(JSON.stringify({ type: 'subscribe', id: '1', payload: { documentId: LIST_DEFAULT } }));
      if (message.type === 'complete') ws.close(1000);
    });
    await new Promise((resolve) => ws.on('open', resolve));
    ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${KEY}` } }));
    expect(await closed).toBe(1000);
    expect(messages.map((message) => message.type)).toEqual(['connection_ack', 'next', 'complete']);
    expect(messages[1]?.payload?.data).toEqual({ pets: [] });
  });
});

describe("examples/web's live list with trusted documents required, as an app ships it", () => {
  const EXAMPLE_MANIFEST = new URL('../../examples/web/src/gql/persisted-documents.json', import.meta.url)
    .pathname;
  /** `query LivePets(...) @live` in the example's manifest. */
  const LIVE_PETS = 'sha256:8c2a922a39bfd9690718712ca64fc7c7f3f41af4e5443af21471fa39a0cb7211';
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      config: LIVE,
      gateway: {
        persistedOperations: { mode: 'require', documents: loadPersistedDocuments(EXAMPLE_MANIFEST) },
      },
    });
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('streams the @live operation sent by its document id alone', async () => {
    const subscription = await subscribeSse(
      gateway.url,
      { documentId: LIVE_PETS, variables: { limit: 5 } },
      `Bearer ${KEY}`,
    );
    try {
      await subscription.waitForEvents(1);
      expect(subscription.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(subscription.events[0]).toEqual({ data: { pets: [] } });
      expect(gateway.live?.stats.open).toBe(1);
    } finally {
      subscription.close();
    }
  });
});

describe('a subscription over MAX_COST', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      config: LIVE,
      limits: { ...DEFAULT_LIMITS, maxCost: 50 },
    });
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('is refused COST_LIMIT_EXCEEDED before anything is watched; one within it opens', async () => {
    const polls = upstream.requests.length;
    expect(await firstCode(gateway.url, 'subscription { pets(limit: 100) { id name } }')).toBe(
      'COST_LIMIT_EXCEEDED',
    );
    expect(await firstCode(gateway.url, 'query @live { pets(limit: 100) { id name } }')).toBe(
      'COST_LIMIT_EXCEEDED',
    );
    expect(upstream.requests.length).toBe(polls);
    expect(await firstCode(gateway.url, 'subscription { pets(limit: 10) { id } }')).toBe('ok');
  });
});

describe('a subscription that could never be sent its events', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({ upstreamUrl: upstream.url, config: LIVE });
  });
  afterAll(async () => {
    await gateway.close();
  });

  const post = (body: unknown, accept?: string) =>
    fetch(gateway.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${KEY}`,
        ...(accept === undefined ? {} : { accept }),
      },
      body: JSON.stringify(body),
      // It used to wait here forever: the JSON answer merged a stream that never ends.
      signal: AbortSignal.timeout(5000),
    });
  type Answer = { errors?: Array<{ extensions?: { code?: string } }>; data?: unknown };

  it('is 406 SUBSCRIPTION_NEEDS_STREAM for a client that accepts only JSON or multipart, with nothing watched', async () => {
    const polls = upstream.requests.length;
    // Yoga sends a subscription's events as SSE only: multipart/mixed carries @defer and @stream.
    for (const accept of [
      'application/json',
      'application/graphql-response+json, application/json;q=0.9',
      'multipart/mixed',
      'multipart/mixed, application/json',
      'text/event-stream;q=0, multipart/mixed',
    ]) {
      const response = await post({ query: LIST }, accept);
      expect(response.status, accept).toBe(406);
      const body = (await response.json()) as Answer;
      expect(body.errors?.[0]?.extensions?.code, accept).toBe('SUBSCRIPTION_NEEDS_STREAM');
    }
    expect(upstream.requests.length).toBe(polls);
    expect(gateway.live?.stats.open).toBe(0);
  });

  it('is refused inside a batch, whose other entries are answered', async () => {
    const response = await post([{ query: LIST }, { query: '{ pets(limit: 1) { id } }' }]);
    // A batch answers 200 with each entry's own result, as for any entry refused on its own.
    expect(response.status).toBe(200);
    const [subscription, query] = (await response.json()) as Answer[];
    expect(subscription?.errors?.[0]?.extensions?.code).toBe('SUBSCRIPTION_NEEDS_STREAM');
    expect(query?.data).toEqual({ pets: expect.any(Array) });
    expect(gateway.live?.stats.open).toBe(0);
  });

  it('is sent as SSE to a client that accepts anything, as Yoga chooses', async () => {
    for (const accept of ['*/*', undefined]) {
      const response = await post({ query: LIST }, accept);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      await response.body?.cancel();
    }
  });
});
