// @tier slow: nginx in front of npm start

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { post } from '../support/graphql.ts';
import { haveNginx, type RunningNginx, startNginx } from '../support/nginx.ts';
import { subscribeSse } from '../support/sse.ts';

// deploy/nginx.conf in front of the gateway, as operators run it: a subscription's events pass
// through as they come (no buffering till the stream ends), over SSE and over a WebSocket.

const KEY = 'nginx-live-key';

describe.skipIf(!haveNginx())('live subscriptions through deploy/nginx.conf', () => {
  let gateway: RunningGateway;
  let nginx: RunningNginx;

  useGateway(
    {
      tokens: [KEY],
      seed: (u) => u.seed(KEY, { id: '1', name: 'Rex', categoryId: '1' }),
      gateway: {
        config: {
          live: { pollMs: 30_000, maxPerKey: 10, maxStreams: 100, slowReaderMs: 30_000, store: 'memory' },
        },
      },
    },
    (started) => {
      ({ gateway } = started);
    },
  );
  beforeAll(async () => {
    nginx = await startNginx(Number(new URL(gateway.origin).port));
  });
  afterAll(async () => {
    await nginx?.stop();
  });

  it('passes each SSE event on while the stream stays open', async () => {
    const subscription = await subscribeSse(
      `${nginx.origin}/graphql`,
      { query: 'subscription { pets { name } }' },
      `Bearer ${KEY}`,
    );
    try {
      await subscription.waitForEvents(1, 3000);
      expect(subscription.ended).toBe(false);
      await post(
        `${nginx.origin}/graphql`,
        { query: 'mutation { createPet(input: { name: "Through nginx", categoryId: "1" }) { id } }' },
        { authorization: `Bearer ${KEY}` },
      );
      await subscription.waitForEvents(2, 2000);
      expect(subscription.events[1]?.data).toEqual({ pets: [{ name: 'Rex' }, { name: 'Through nginx' }] });
    } finally {
      subscription.close();
    }
  });

  it('upgrades a graphql-ws connection and relays its events', async () => {
    const ws = new WebSocket(`${nginx.origin.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const next = new Promise<unknown>((resolve, reject) => {
      ws.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string; payload?: unknown };
        if (message.type === 'connection_ack')
          ws.send(
            JSON.stringify({
              id: '1',
              type: 'subscribe',
              payload: { query: 'subscription { pets { id } }' },
            }),
          );
        if (message.type === 'next') resolve(message.payload);
      });
      ws.on('error', reject);
    });
    ws.on('open', () =>
      ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${KEY}` } })),
    );
    try {
      expect(await next).toMatchObject({ data: { pets: expect.arrayContaining([{ id: '1' }]) } });
    } finally {
      ws.close();
    }
  });
});
