// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';
import { haveRedisServer, type RunningRedis, startRedis } from '../support/redis.ts';
import { subscribeSse } from '../support/sse.ts';
import { until } from '../support/wait.ts';

// LIVE_STORE=redis: a create made on instance A reaches a subscriber on instance B within a
// second, though B polls only every 30 s; the announcement names the caller by the keyed HMAC,
// never the key.

const KEY = 'two-instances-key';
const SECRET = 'a-shared-secret-of-at-least-32-characters';

describe.skipIf(!haveRedisServer('two-instances.test'))('live lists on two instances sharing a Redis', () => {
  let redis: RunningRedis;
  let upstream: FakeUpstream;
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    redis = await startRedis();
    upstream = await startFakeUpstream();
    upstream.tokens.add(KEY);
    const config = {
      live: { pollMs: 30_000, maxPerKey: 10, maxStreams: 100, slowReaderMs: 30_000, store: 'redis' as const },
      redisUrl: new URL(redis.url),
      redisKeySecret: SECRET,
    };
    a = await startGateway({ upstreamUrl: upstream.url, config });
    b = await startGateway({ upstreamUrl: upstream.url, config });
  });
  /** Waits until `count` connections are subscribed to the announcements' channel. */
  async function listeners(count: number) {
    const { createClient } = await import('redis');
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      await until(
        async () => ((await client.pubSubNumSub('pg:live:v1:created'))['pg:live:v1:created'] ?? 0) >= count,
        5_000,
      );
    } finally {
      await client.close();
    }
  }

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await upstream?.close();
    await redis?.stop();
  });

  it.each([
    ['subscription', 'subscription { pets { name } }'],
    ['@live query', 'query @live { pets { name } }'],
  ])('sends a pet created through A to a %s on B within a second', async (kind, document) => {
    const subscription = await subscribeSse(b.url, { query: document }, `Bearer ${KEY}`);
    try {
      await subscription.waitForEvents(1);
      const before =
        (subscription.events[0]?.data as { pets: Array<{ name: string }> } | undefined)?.pets ?? [];
      // Each instance hears the channel on a connection of its own: both are listening first.
      await listeners(2);
      const started = performance.now();
      const name = `Made on A for a ${kind}`;
      const created = await post(
        a.url,
        { query: `mutation { createPet(input: { name: "${name}", categoryId: "1" }) { id } }` },
        { authorization: `Bearer ${KEY}` },
      );
      expect(created.status).toBe(200);
      await subscription.waitForEvents(2, 1000);
      expect(performance.now() - started).toBeLessThan(1000);
      expect(subscription.events[1]?.data).toEqual({ pets: [...before, { name }] });
    } finally {
      subscription.close();
    }
  });

  it('never puts the key on the channel', async () => {
    const { createClient } = await import('redis');
    const listener = createClient({ url: redis.url });
    await listener.connect();
    const heard: string[] = [];
    await listener.pSubscribe('*', (message) => heard.push(message));
    try {
      await post(
        a.url,
        { query: 'mutation { createPet(input: { name: "Heard", categoryId: "1" }) { id } }' },
        { authorization: `Bearer ${KEY}` },
      );
      for (let i = 0; i < 20 && heard.length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard.length).toBeGreaterThan(0);
      for (const message of heard) {
        expect(message).not.toContain(KEY);
        expect(message).toMatch(/^[0-9a-f]{64}$/);
      }
    } finally {
      await listener.close();
    }
  });
});
