// @tier integration

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { capturedLogs, until } from '../support/wait.ts';

// What one WebSocket may hold and send, whatever its client does: a client that floods, one that
// stops reading, one that runs too many operations at once, one without a key. Each is closed (or
// refused) with a code, one warn line and a count in /metrics, and the others are served.

const KEY = 'ws-bounds';
const PROTOCOL = 'graphql-transport-ws';

let upstream: FakeUpstream;
const { logger, lines } = capturedLogs('debug');
const gateways: RunningGateway[] = [];
const clients: WebSocket[] = [];

async function gatewayWith(env: Record<string, string> = {}, metrics?: Metrics) {
  const loaded = loadConfig(env);
  const gateway = await startGateway({
    upstreamUrl: upstream.url,
    config: {
      webSocket: loaded.webSocket,
      live: loaded.live,
      corsOrigins: loaded.corsOrigins,
      maxConnections: loaded.maxConnections,
      maxConnectionsPerAddress: loaded.maxConnectionsPerAddress,
    },
    gateway: { logger },
    ...(metrics ? { metrics } : {}),
  });
  gateways.push(gateway);
  return gateway;
}

interface Peer {
  ws: WebSocket;
  messages: Array<{ id?: string; type: string; payload?: unknown }>;
  closed: Promise<{ code: number; reason: string }>;
  send(message: object): void;
}

/** A raw graphql-ws client; `init` sends connection_init with these params once open. */
async function connect(
  gateway: RunningGateway,
  options: { init?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<Peer> {
  const ws = new WebSocket(gateway.url.replace(/^http/, 'ws'), PROTOCOL, { headers: options.headers ?? {} });
  clients.push(ws);
  const messages: Peer['messages'] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  ws.on('error', () => {});
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
  });
  const peer = { ws, messages, closed, send: (message: object) => ws.send(JSON.stringify(message)) };
  if (options.init) peer.send({ type: 'connection_init', payload: options.init });
  return peer;
}

const openSockets = async (gateway: RunningGateway) =>
  ((await (await fetch(`${gateway.origin}/health`)).json()) as { streams: { webSockets: number } }).streams
    .webSockets;

async function closedFor(metrics: Metrics, reason: string): Promise<number> {
  const metric = await metrics.registry.getSingleMetric('pet_gateway_client_connections_closed_total')?.get();
  return metric?.values.find((value) => value.labels.reason === reason)?.value ?? 0;
}

/** Stops reading: what the gateway sends stays in its buffers, as for a client that hangs. */
const stopReading = (peer: Peer) => (peer.ws as unknown as { _socket: { pause(): void } })._socket.pause();

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(KEY);
  upstream.seed(KEY, { id: '1', name: 'Rex', categoryId: '1' });
});
afterEach(() => {
  for (const ws of clients.splice(0)) ws.terminate();
  upstream.clearFaults();
});
afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  await upstream.close();
});

describe('a WebSocket that floods or stops reading', () => {
  it('is closed within a second when it sends pings past WS_MAX_MESSAGES_PER_SECOND and never reads', async () => {
    const metrics = createMetrics();
    const gateway = await gatewayWith({}, metrics);
    const peer = await connect(gateway);
    stopReading(peer);
    for (let i = 0; i < 20_000; i++) peer.send({ type: 'ping' });
    const took = await until(async () => (await openSockets(gateway)) === 0, 3000);
    expect(took).toBeLessThan(1500);
    expect(await closedFor(metrics, 'flood')).toBe(1);
    expect(lines.filter((line) => line.reason === 'flood' && line.level === 40)).toHaveLength(1);
  });

  it('is told 1008, naming the bound, when its connection_init and pings pass it while it reads', async () => {
    const gateway = await gatewayWith({ WS_MAX_MESSAGES_PER_SECOND: '10' });
    const peer = await connect(gateway, { init: { authorization: `Bearer ${KEY}` } });
    // The connection_init and nine pings are the second's ten: each ping is answered.
    for (let i = 0; i < 9; i++) peer.send({ type: 'ping' });
    await until(() => peer.messages.filter((m) => m.type === 'pong').length === 9, 2000);
    peer.send({ type: 'ping' });
    const { code, reason } = await peer.closed;
    expect(code).toBe(1008);
    expect(reason).toBe('WebSocket closed: more than 10 messages a second');
  });

  it('is closed as a slow reader once WS_MAX_BUFFERED_BYTES of answers wait unread', async () => {
    // Lists of about 900 kB each: a few fill the loopback's kernel buffers, then the socket's own.
    const name = 'n'.repeat(9000);
    for (let id = 2; id <= 100; id++) upstream.seed(KEY, { id: String(id), name, categoryId: '1' });
    const metrics = createMetrics();
    const gateway = await gatewayWith({ WS_MAX_BUFFERED_BYTES: '65536' }, metrics);
    const peer = await connect(gateway, { init: { authorization: `Bearer ${KEY}` } });
    await until(() => peer.messages.some((m) => m.type === 'connection_ack'), 2000);
    stopReading(peer);
    let sent = 0;
    const sending = setInterval(() => {
      if (peer.ws.readyState === WebSocket.OPEN && sent < 200) {
        peer.send({
          id: String(++sent),
          type: 'subscribe',
          payload: { query: '{ pets(limit: 100) { name } }' },
        });
      }
    }, 50);
    try {
      await until(async () => (await openSockets(gateway)) === 0, 15_000);
    } finally {
      clearInterval(sending);
    }
    expect(await closedFor(metrics, 'slow_reader')).toBe(1);
    // Closed on the first answer that would not fit, not after every operation ran.
    expect(sent).toBeLessThan(200);
    expect(lines.some((line) => line.reason === 'slow_reader' && line.level === 40)).toBe(true);
  }, 30_000);

  it('refuses an operation past WS_MAX_OPERATIONS at once with TOO_MANY_OPERATIONS; the others run', async () => {
    upstream.fault(/^\/v1\/pets\?/, (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[{"id":1,"name":"Slow","categoryId":1}]');
      }, 500);
    });
    const gateway = await gatewayWith({ WS_MAX_OPERATIONS: '4' });
    const peer = await connect(gateway, { init: { authorization: `Bearer ${KEY}` } });
    await until(() => peer.messages.some((m) => m.type === 'connection_ack'), 2000);
    for (let id = 1; id <= 5; id++) {
      peer.send({ id: String(id), type: 'subscribe', payload: { query: '{ pets(limit: 1) { name } }' } });
    }
    await until(() => peer.messages.filter((m) => m.type === 'complete').length === 4, 3000);
    const refused = peer.messages.filter((m) => m.type === 'error');
    expect(refused).toEqual([
      {
        id: '5',
        type: 'error',
        payload: [
          {
            message: 'At most 4 operations run at once on one WebSocket.',
            extensions: { code: 'TOO_MANY_OPERATIONS', limit: 4 },
          },
        ],
      },
    ]);
    expect(peer.messages.filter((m) => m.type === 'next')).toHaveLength(4);
    // Their slots are free again once they ended.
    peer.send({ id: '6', type: 'subscribe', payload: { query: '{ pets(limit: 1) { name } }' } });
    await until(() => peer.messages.some((m) => m.id === '6' && m.type === 'next'), 3000);
  });
});

describe('the key of a WebSocket', () => {
  it('is read from connectionParams in any case, as Apollo spells headers', async () => {
    const gateway = await gatewayWith();
    const peer = await connect(gateway, { init: { Authorization: `Bearer ${KEY}` } });
    await until(() => peer.messages.some((m) => m.type === 'connection_ack'), 2000);
    peer.send({ id: '1', type: 'subscribe', payload: { query: '{ pets(limit: 1) { name } }' } });
    await until(() => peer.messages.some((m) => m.type === 'next'), 2000);
    expect(peer.messages.find((m) => m.type === 'next')?.payload).toEqual({
      data: { pets: [{ name: 'Rex' }] },
    });
  });

  it('is required at connection_init: without a usable one the socket is closed 4403, naming connectionParams', async () => {
    const metrics = createMetrics();
    const gateway = await gatewayWith({}, metrics);
    for (const init of [{}, { authorization: 'Basic abc' }, { authorization: 5 }]) {
      const peer = await connect(gateway, { init });
      expect(await peer.closed).toEqual({
        code: 4403,
        reason: 'connectionParams.authorization must be "Bearer <API key>"',
      });
    }
    expect(await closedFor(metrics, 'unauthenticated')).toBe(3);
  });

  it('is taken from the upgrade request’s Authorization header when connectionParams has none', async () => {
    const gateway = await gatewayWith();
    const peer = await connect(gateway, { init: {}, headers: { authorization: `Bearer ${KEY}` } });
    await until(() => peer.messages.some((m) => m.type === 'connection_ack'), 2000);
  });
});

describe('who may open a WebSocket', () => {
  it('refuses Origin: null under CORS_ORIGINS=*, as CORS does, and admits it when listed', async () => {
    const open = await gatewayWith();
    await expect(connect(open, { headers: { origin: 'null' } })).rejects.toThrow('upgrade answered 403');
    await connect(open, { headers: { origin: 'https://app.example' } });
    const listed = await gatewayWith({ CORS_ORIGINS: 'null' });
    await connect(listed, { headers: { origin: 'null' } });
  });

  it('counts upgraded sockets against MAX_CONNECTIONS: keyless ones make room, and HTTP clients are served', async () => {
    const metrics = createMetrics();
    const gateway = await gatewayWith({ MAX_CONNECTIONS: '8', MAX_CONNECTIONS_PER_ADDRESS: '8' }, metrics);
    const opened = await Promise.allSettled(Array.from({ length: 12 }, () => connect(gateway)));
    expect(opened.filter((result) => result.status === 'fulfilled').length).toBeGreaterThanOrEqual(8);
    expect(await openSockets(gateway)).toBeLessThanOrEqual(8);
    const answer = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ query: '{ pets(limit: 1) { name } }' }),
    });
    expect(answer.status).toBe(200);
    expect(await closedFor(metrics, 'evicted')).toBeGreaterThanOrEqual(4);
  });
});

describe('clients that come and go', () => {
  it('write nothing to stderr when fifty subscribe and vanish mid-stream', async () => {
    const gateway = await gatewayWith();
    const written: string[] = [];
    const stderrWrite = process.stderr.write.bind(process.stderr);
    const consoleError = console.error;
    process.stderr.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    console.error = (...args: unknown[]) => written.push(args.map(String).join(' '));
    try {
      const peers = await Promise.all(
        Array.from({ length: 50 }, () => connect(gateway, { init: { authorization: `Bearer ${KEY}` } })),
      );
      for (const peer of peers) {
        await until(() => peer.messages.some((m) => m.type === 'connection_ack'), 2000);
        peer.send({
          id: '1',
          type: 'subscribe',
          payload: { query: 'subscription { pets(limit: 1) { name } }' },
        });
        for (let i = 0; i < 20; i++) peer.send({ type: 'ping' });
      }
      for (const [index, peer] of peers.entries()) {
        if (index % 2 === 0) peer.ws.terminate();
        else peer.ws.close();
      }
      await until(async () => (await openSockets(gateway)) === 0, 3000);
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      process.stderr.write = stderrWrite;
      console.error = consoleError;
    }
    expect(written).toEqual([]);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});
