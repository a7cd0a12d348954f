// @tier slow: npm start stopped with subscriptions open

import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSlowListUpstream } from '../support/fake-upstream.ts';
import { npmStart } from '../support/npm-start.ts';
import { subscribeSse } from '../support/sse.ts';

// SIGTERM with subscriptions open: each stream ends cleanly within the drain (SSE `complete`,
// graphql-ws closed as going away, 1001), so clients reconnect to another instance, and the
// process exits.

const PETS = 'subscription { pets(limit: 3) { id } }';
const LIVE_PETS = 'query @live { pets(limit: 3) { id } }';

describe('SIGTERM with live subscriptions open', () => {
  it('ends every SSE and WebSocket stream within 5 s and exits', async () => {
    const gateway = await npmStart({ LOG_LEVEL: 'warn' });
    const key = `Bearer ${gateway.key}`;
    const sse = await subscribeSse(`${gateway.origin}/graphql`, { query: PETS }, key);
    await sse.waitForEvents(1);
    const live = await subscribeSse(`${gateway.origin}/graphql`, { query: LIVE_PETS }, key);
    await live.waitForEvents(1);
    const ws = new WebSocket(`${gateway.origin.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const messages: Array<{ type: string }> = [];
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string };
      messages.push(message);
      if (message.type === 'connection_ack') {
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: PETS } }));
      }
    });
    ws.on('open', () =>
      ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: key } })),
    );
    const firstNext = async () => {
      for (let i = 0; i < 100 && !messages.some((m) => m.type === 'next'); i++)
        await new Promise((r) => setTimeout(r, 50));
    };
    await firstNext();
    expect(messages.map((m) => m.type)).toContain('next');

    const started = performance.now();
    const stopped = gateway.stop();
    await sse.waitForEnd(5000);
    await live.waitForEnd(5000);
    const code = await closed;
    await stopped;
    expect(performance.now() - started).toBeLessThan(5000);
    expect(sse.ended).toBe(true);
    expect(code).toBe(1001);
    expect(messages.map((m) => m.type)).toContain('complete');
  });

  it('exits within the drain window with a WebSocket whose client stopped reading', async () => {
    const gateway = await npmStart({ LOG_LEVEL: 'warn' });
    const ws = new WebSocket(`${gateway.origin.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    await new Promise((resolve) => ws.once('open', resolve));
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${gateway.key}` } }));
    const started = performance.now();
    await gateway.stop();
    // The idle socket is told 1001 at once and, not answering, cut a second later; the process
    // leaves then, not after ws's 30 s close handshake.
    expect(performance.now() - started).toBeLessThan(5000);
    ws.terminate();
  });

  it('lets a query running over a WebSocket finish, as an HTTP request does, then closes 1001', async () => {
    const upstream = await startSlowListUpstream(3000);
    try {
      const gateway = await npmStart({ LOG_LEVEL: 'warn', UPSTREAM_URL: upstream.url });
      const ws = new WebSocket(`${gateway.origin.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
      const messages: Array<{ type: string; payload?: unknown }> = [];
      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      ws.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string };
        messages.push(message);
        if (message.type === 'connection_ack') {
          ws.send(
            JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ pets(limit: 1) { name } }' } }),
          );
        }
      });
      ws.on('open', () =>
        ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: 'Bearer t' } })),
      );
      // The query is at the upstream (3 s) when SIGTERM comes.
      for (let i = 0; i < 100 && upstream.requests.length === 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      const started = performance.now();
      const stopped = gateway.stop();
      expect(await closed).toBe(1001);
      await stopped;
      expect(messages.map((m) => m.type)).toEqual(['connection_ack', 'next', 'complete']);
      expect(messages[1]?.payload).toEqual({ data: { pets: [{ name: 'Slow' }] } });
      expect(performance.now() - started).toBeGreaterThan(2000);
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      await upstream.close();
    }
  });
});
