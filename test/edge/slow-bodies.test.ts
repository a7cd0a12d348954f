// @tier slow: npm start under ulimit with 120 dripping sockets

import { once } from 'node:events';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionClose } from '../../src/edge/listener.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';

const TOKEN = 'slow-bodies-token';
const QUERY = JSON.stringify({ query: '{ pets(limit: 1) { id name } }' });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once the socket is connected, or has failed (a refused connection is reset at once). */
const settled = (socket: Socket) =>
  new Promise<void>((resolve) => {
    socket.once('connect', () => resolve());
    socket.once('error', () => resolve());
  });

/**
 * A POST whose headers promise a 60,000-byte body that then arrives one byte every `everyMs`.
 * Resolves with what the server wrote back once the socket closes.
 */
function drip(
  port: number,
  everyMs: number,
  from = '127.0.0.1',
): { socket: Socket; answer: Promise<string> } {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  socket.on('error', () => {});
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk;
  });
  socket.once('connect', () => {
    socket.write(
      'POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 60000\r\n\r\n{',
    );
    const timer = setInterval(() => {
      if (socket.writable) socket.write(' ');
    }, everyMs);
    socket.once('close', () => clearInterval(timer));
  });
  // Not events.once: it rejects on the 'error' a reset connection emits before its 'close'.
  return { socket, answer: new Promise<string>((resolve) => socket.once('close', () => resolve(received))) };
}

/** A request on a fresh connection from `from`; its status, or the error code when the connection was closed. */
function fresh(
  port: number,
  path: string,
  options: { from?: string; body?: string; authorization?: string } = {},
): Promise<number | string> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.authorization) headers.authorization = options.authorization;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.body ? 'POST' : 'GET',
        headers,
        agent: false,
        localAddress: options.from ?? '127.0.0.1',
      },
      (res) => {
        res.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve(res.statusCode === 200 && /"errors"/.test(text) ? text : (res.statusCode ?? 0)),
        );
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end(options.body);
  });
}

describe('the listener and slow or crowding clients', () => {
  let upstream: FakeUpstream;
  const gateways: RunningGateway[] = [];
  const sockets: Socket[] = [];
  const closed: ConnectionClose[] = [];

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    upstream.tokens.add(TOKEN);
    upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '9' });
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    for (const gateway of gateways.splice(0)) await gateway.close();
    closed.length = 0;
    upstream.clearFaults();
  });
  afterAll(async () => {
    await upstream.close();
  });

  async function gatewayWith(server: Parameters<typeof startGateway>[0]['server']): Promise<number> {
    const gateway = await startGateway({
      upstreamUrl: upstream.url,
      server: { ...server, onClose: (reason) => closed.push(reason) },
    });
    gateways.push(gateway);
    return Number(new URL(gateway.origin).port);
  }

  it('answers 408 to a body dripping in below the minimum rate once its grace is over, and keeps a slow one above it', async () => {
    const port = await gatewayWith({ bodyGraceMs: 500, minBodyBytesPerSecond: 240 });
    const dripping = drip(port, 500);
    sockets.push(dripping.socket);
    // 300 B/s: slow, but over the minimum, so it is served.
    const body = Buffer.from(QUERY);
    const steady = connect(port, '127.0.0.1');
    steady.on('error', () => {});
    const steadyClosed = once(steady, 'close');
    sockets.push(steady);
    let steadyAnswer = '';
    steady.on('data', (chunk) => {
      steadyAnswer += chunk;
    });
    steady.write(
      `POST /graphql HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: ${body.length}\r\n\r\n`,
    );
    for (let i = 0; i < body.length; i += 30) {
      steady.write(body.subarray(i, i + 30));
      await sleep(100);
    }
    const answer = await dripping.answer;
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
    expect(answer).toContain('The request body arrived too slowly.');
    expect(closed).toContain('slow_body');
    await steadyClosed;
    expect(steadyAnswer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(steadyAnswer).toContain('"name":"Rex"');
  });

  it('does not evict a just-connected client as idle before its first request arrives', async () => {
    const port = await gatewayWith({ maxConnections: 4, maxConnectionsPerAddress: 100 });
    const first = connect(port, '127.0.0.1');
    first.on('error', () => {});
    sockets.push(first);
    await once(first, 'connect');
    const others = Array.from({ length: 4 }, () => connect(port, '127.0.0.1'));
    for (const socket of others) socket.on('error', () => {});
    sockets.push(...others);
    await Promise.all(others.map((socket) => settled(socket)));
    await sleep(50);
    let answer = '';
    first.on('data', (chunk) => {
      answer += chunk;
    });
    first.write(`GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
    await once(first, 'close');
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(closed).not.toContain('evicted');
  });

  it('holds one address to its share of the cap, so another address still gets in', async () => {
    const port = await gatewayWith({ maxConnections: 20, maxConnectionsPerAddress: 5, probeSlots: 0 });
    const crowd = Array.from({ length: 15 }, () => drip(port, 1000));
    sockets.push(...crowd.map((c) => c.socket));
    await Promise.all(crowd.map((c) => settled(c.socket)));
    await sleep(200);
    const status = await fresh(port, '/graphql', {
      from: '127.0.0.2',
      body: QUERY,
      authorization: `Bearer ${TOKEN}`,
    });
    expect(status).toBe(200);
    expect(closed.filter((reason) => reason === 'refused')).toHaveLength(10);
  });

  it('lets a probe through when every slot is busy, and answers anything else there 503', async () => {
    const port = await gatewayWith({ maxConnections: 3, maxConnectionsPerAddress: 100, probeSlots: 2 });
    const busy = Array.from({ length: 3 }, () => drip(port, 1000));
    sockets.push(...busy.map((c) => c.socket));
    await Promise.all(busy.map((c) => settled(c.socket)));
    await sleep(200);
    expect(await fresh(port, '/health')).toBe(200);
    expect(await fresh(port, '/readiness')).toBe(200);
    expect(await fresh(port, '/graphql', { body: QUERY, authorization: `Bearer ${TOKEN}` })).toBe(503);
    expect(closed).toContain('probe_only');
  });
});

describe('npm start under ulimit -n 256 (a cap of 64) with 120 sockets dripping request bodies from one address', () => {
  let gateway: StartedGateway;
  afterAll(async () => {
    await gateway?.stop();
  });

  it('answers /health and a real query 5 of 5 on fresh connections from another address, and warns', async () => {
    gateway = await npmStart({ LOG_LEVEL: 'warn' }, { fileDescriptors: 256 });
    const port = Number(new URL(gateway.origin).port);
    // The attacker keeps 120 sockets dripping, reconnecting each one the gateway closes.
    let attacking = true;
    const attackers = new Set<Socket>();
    const attack = () => {
      const { socket, answer } = drip(port, 2000);
      attackers.add(socket);
      void answer.then(() => {
        attackers.delete(socket);
        if (attacking) setTimeout(attack, 50);
      });
    };
    for (let i = 0; i < 120; i++) attack();
    try {
      const health: Array<number | string> = [];
      const queries: Array<number | string> = [];
      // Over 10 s: past the 5 s body grace, while the crowd reconnects.
      for (let i = 0; i < 5; i++) {
        await sleep(2000);
        health.push(await fresh(port, '/health', { from: '127.0.0.2' }));
        queries.push(
          await fresh(port, '/graphql', {
            from: '127.0.0.2',
            body: QUERY,
            authorization: `Bearer ${gateway.key}`,
          }),
        );
      }
      expect(health).toEqual([200, 200, 200, 200, 200]);
      expect(queries).toEqual([200, 200, 200, 200, 200]);
      // One warn line per 10 s at most: the first (at the first refusal) may predate any slow body.
      const warned = /"level":40.*"slow_body":[1-9].*client connections closed/;
      await gateway.waitFor(warned, 6000);
    } finally {
      attacking = false;
      for (const socket of attackers) socket.destroy();
    }
  }, 30_000);
});
