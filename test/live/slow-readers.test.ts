// @tier integration

import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Channel } from '../../src/live/channel.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { type SseSubscription, subscribeSse } from '../support/sse.ts';
import { capturedLogs, until } from '../support/wait.ts';

// A live list holds, for each subscriber, its newest list and nothing more; a subscriber whose
// client stopped reading is ended after LIVE_SLOW_READER_MS and its connection closed; a client
// that is done (graphql-ws `complete`, a closed socket, an ended SSE request) frees its slot and
// stops the poll within a second, with Yoga's production keep-alive (12 s), not only under
// NODE_ENV=test, whose 300 ms keep-alive used to hide the wait.

const KEY = 'slow-readers';
const POLL_MS = 1000;
const SUBSCRIPTION = 'subscription { pets(limit: 100) { id name } }';
const LIVE_QUERY = 'query Stalled @live { pets(limit: 100) { id name } }';

let upstream: FakeUpstream;
let nodeEnv: string | undefined;
const gateways: RunningGateway[] = [];
const sockets: Socket[] = [];
const subscriptions: SseSubscription[] = [];
const { logger, lines } = capturedLogs('info');

async function gatewayWith(live: { maxPerKey?: number; slowReaderMs?: number }, metrics = createMetrics()) {
  const gateway = await startGateway({
    upstreamUrl: upstream.url,
    config: {
      live: {
        pollMs: POLL_MS,
        maxPerKey: 10,
        maxStreams: 100,
        slowReaderMs: 30_000,
        store: 'memory',
        ...live,
      },
    },
    gateway: { logger },
    metrics,
  });
  gateways.push(gateway);
  return { gateway, metrics };
}

/** A subscriber over SSE whose client never reads a byte of the answer. */
async function neverReading(gateway: RunningGateway, query = SUBSCRIPTION): Promise<Socket> {
  const socket = connect(Number(new URL(gateway.origin).port), '127.0.0.1');
  sockets.push(socket);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.pause();
  const body = JSON.stringify({ query });
  socket.write(
    `POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: text/event-stream\r\nauthorization: Bearer ${KEY}\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
  );
  return socket;
}

const health = async (gateway: RunningGateway) =>
  ((await (await fetch(`${gateway.origin}/health`)).json()) as { streams: { subscriptions: number } })
    .streams;

const polls = () => upstream.requests.filter((request) => request.path.startsWith('/v1/pets?')).length;

beforeAll(async () => {
  // Yoga reads NODE_ENV on each SSE answer: production's keep-alive, as users run it.
  nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  upstream = await startFakeUpstream();
  upstream.tokens.add(KEY);
  upstream.seed(KEY, { id: '1', name: 'Rex', categoryId: '1' });
});
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const subscription of subscriptions.splice(0)) subscription.close();
  upstream.clearFaults();
});
afterAll(async () => {
  process.env.NODE_ENV = nodeEnv;
  for (const gateway of gateways) await gateway.close();
  await upstream.close();
});

describe('a subscriber that stops reading', () => {
  it('holds its newest list, not a queue: a thousand changes unread are one value', async () => {
    const channel = new Channel<number>(() => {});
    for (let value = 1; value <= 1000; value++) channel.push(value);
    expect(await channel.next()).toEqual({ value: 1000, done: false });
    const waiting = channel.next();
    channel.push(1001);
    expect(await waiting).toEqual({ value: 1001, done: false });
    expect(channel.unreadFor(performance.now())).toBe(0);
  });

  it('is ended after LIVE_SLOW_READER_MS with its connection closed; a reader beside it goes on getting changes', async () => {
    // Each poll answers a new list of about 900 kB: a few fill a non-reader's socket buffers.
    let version = 0;
    const name = 'n'.repeat(9000);
    upstream.fault(/^\/v1\/pets\?/, (_req, res) => {
      version++;
      const pets = Array.from({ length: 100 }, (_, i) => ({
        id: i + 1,
        name: `${version}${name}`,
        categoryId: 1,
      }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(pets));
    });
    const { gateway, metrics } = await gatewayWith({ slowReaderMs: 1000 });
    const reader = await subscribeSse(gateway.url, { query: SUBSCRIPTION }, `Bearer ${KEY}`);
    subscriptions.push(reader);
    // A live query is held to the same bound as a subscription: two of the five are.
    const stalled = await Promise.all(
      Array.from({ length: 5 }, (_, i) => neverReading(gateway, i % 2 === 1 ? LIVE_QUERY : SUBSCRIPTION)),
    );
    const closed = stalled.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
    await until(async () => (await health(gateway)).subscriptions === 6, 3000);
    // Every non-reader is ended a second after its kernel and socket buffers filled (a few polls
    // of 900 kB), its connection closed; the reader goes on.
    await until(async () => (await health(gateway)).subscriptions === 1, 20_000);
    // Closed by the gateway: a client that reads again finds its stream cut, not completed.
    for (const socket of stalled) socket.resume();
    await Promise.all(closed);
    expect(gateway.live?.stats.slowReaders).toBe(5);
    const counted = await metrics.registry
      .getSingleMetric('pet_gateway_client_connections_closed_total')
      ?.get();
    expect(counted?.values.find((value) => value.labels.reason === 'slow_reader')?.value).toBe(5);
    expect(lines.filter((line) => line.reason === 'slow_reader' && line.level === 40)).toHaveLength(5);
    const seen = reader.events.length;
    await reader.waitForEvents(seen + 1, 3000);
    expect(reader.ended).toBe(false);
  }, 30_000);
});

describe('a client that is done', () => {
  it('frees its slot and stops the poll within a second on graphql-ws `complete`: four cycles under LIVE_MAX_PER_KEY=3', async () => {
    const { gateway } = await gatewayWith({ maxPerKey: 3 });
    const ws = new WebSocket(gateway.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const messages: Array<{ id?: string; type: string; payload?: { errors?: unknown } }> = [];
    ws.on('message', (data) => messages.push(JSON.parse(String(data))));
    await new Promise((resolve) => ws.once('open', resolve));
    try {
      ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${KEY}` } }));
      await until(() => messages.some((m) => m.type === 'connection_ack'), 2000);
      const started = performance.now();
      for (let cycle = 1; cycle <= 4; cycle++) {
        const id = String(cycle);
        ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query: SUBSCRIPTION } }));
        await until(() => messages.some((m) => m.id === id && m.type === 'next'), 2000);
        ws.send(JSON.stringify({ id, type: 'complete' }));
        await until(async () => (await health(gateway)).subscriptions === 0, 1000);
      }
      expect(performance.now() - started).toBeLessThan(2000);
      expect(messages.filter((m) => m.type === 'next' && m.payload?.errors)).toEqual([]);
      // Nothing is watched any more: no poll in the next poll interval and a half.
      const before = polls();
      await new Promise((resolve) => setTimeout(resolve, POLL_MS * 1.5));
      expect(polls()).toBe(before);
    } finally {
      ws.terminate();
    }
  });

  it('frees its slot within a second when an SSE client goes away', async () => {
    const { gateway } = await gatewayWith({});
    const subscription = await subscribeSse(gateway.url, { query: SUBSCRIPTION }, `Bearer ${KEY}`);
    await subscription.waitForEvents(1);
    expect((await health(gateway)).subscriptions).toBe(1);
    subscription.close();
    expect(await until(async () => (await health(gateway)).subscriptions === 0, 1000)).toBeLessThan(1000);
  });
});
