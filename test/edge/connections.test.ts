// @tier slow: gateway processes under a file-descriptor limit

import { once } from 'node:events';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { ConnectionClose } from '../../src/edge/listener.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { ListPets } from '../support/operations.ts';
import { killSpawned, spawnWatched } from '../support/process.ts';

const TOKEN = 'connections-token';

/** Opens `count` client sockets that send nothing, and waits until all are connected. */
async function idleSockets(port: number, count: number): Promise<Socket[]> {
  const sockets = Array.from({ length: count }, () => connect(port, '127.0.0.1'));
  for (const socket of sockets) socket.on('error', () => {});
  await Promise.all(sockets.map((socket) => once(socket, 'connect')));
  return sockets;
}

/** GET on a fresh connection; the status, or the error code when the socket was closed instead. */
function freshGet(port: number, path: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

describe('MAX_CONNECTIONS', () => {
  it('defaults to the file-descriptor limit less two per upstream connection and 64 spare', () => {
    expect(loadConfig({}, { fileDescriptors: 1024 }).maxConnections).toBe(1024 - 128 - 64);
    expect(loadConfig({ UPSTREAM_CONNECTIONS: '8' }, { fileDescriptors: 256 }).maxConnections).toBe(176);
    expect(loadConfig({}, { fileDescriptors: 100 }).maxConnections).toBe(32);
    expect(loadConfig({ MAX_CONNECTIONS: '500' }, { fileDescriptors: 256 }).maxConnections).toBe(500);
    // A quarter of the cap per client address, at least 8.
    expect(loadConfig({}, { fileDescriptors: 1024 }).maxConnectionsPerAddress).toBe(208);
    expect(loadConfig({}, { fileDescriptors: 256 }).maxConnectionsPerAddress).toBe(16);
    expect(loadConfig({}, { fileDescriptors: 100 }).maxConnectionsPerAddress).toBe(8);
    expect(loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '3' }).maxConnectionsPerAddress).toBe(3);
    expect(() => loadConfig({ MAX_CONNECTIONS: '0' })).toThrowError(
      /^MAX_CONNECTIONS must be an integer from 1 to 1000000, got "0"$/,
    );
  });
});

describe('the listener at its connection cap', () => {
  let upstream: FakeUpstream;
  let gateway: RunningGateway;
  const closed: ConnectionClose[] = [];
  const sockets: Socket[] = [];

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    upstream.tokens.add(TOKEN);
    upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '9' });
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      // One address may hold them all here (slow-bodies.test.ts holds the per-address share).
      server: {
        maxConnections: 20,
        maxConnectionsPerAddress: 100,
        unparsedGraceMs: 100,
        headersTimeoutMs: 400,
        onClose: (reason) => closed.push(reason),
      },
    });
  });

  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
    closed.length = 0;
    upstream.requests.length = 0;
  });

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  const port = () => Number(new URL(gateway.origin).port);

  it('serves /health and GraphQL while a crowd holds idle sockets up to the cap, closing the oldest idle ones', async () => {
    sockets.push(...(await idleSockets(port(), 20)));
    // Connected but silent: protected from eviction for the unparsed grace, then the oldest go.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await freshGet(port(), '/health')).toBe(200);
    const result = await execute(gateway.url, ListPets, { limit: 1 }, `Bearer ${TOKEN}`);
    expect(result.errors).toBeUndefined();
    expect(closed.filter((reason) => reason === 'evicted').length).toBeGreaterThanOrEqual(1);
    // The first crowd sockets were the ones closed.
    expect(sockets[0]?.destroyed || sockets[0]?.readableEnded).toBe(true);
  });

  it('refuses a new connection when every held one is busy, and says so', async () => {
    const refusals: ConnectionClose[] = [];
    const small = await startGateway({
      upstreamUrl: upstream.url,
      // No slots past the cap for probes (slow-bodies.test.ts shows /health getting one).
      server: { maxConnections: 5, probeSlots: 0, onClose: (reason) => refusals.push(reason) },
    });
    upstream.fault(/pets/, () => {}); // the upstream never answers: every request stays in flight
    try {
      const busy = await idleSockets(Number(new URL(small.origin).port), 5);
      sockets.push(...busy);
      busy.forEach((socket, i) => {
        // Different limits: one caller's identical GETs in flight would be coalesced into one.
        const body = JSON.stringify({ query: `{ pets(limit: ${i + 1}) { id } }` });
        socket.write(
          `POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        );
      });
      for (let i = 0; i < 200 && upstream.requests.length < 5; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(upstream.requests.length).toBe(5);
      const answer = await freshGet(Number(new URL(small.origin).port), '/health');
      expect(String(answer)).toMatch(/ECONNRESET|EPIPE|socket hang up/);
      expect(refusals).toEqual(['refused']);
    } finally {
      upstream.clearFaults();
      await small.close();
    }
  });

  it('closes a connection that sends nothing once the header time is up, with a 408', async () => {
    const [socket] = await idleSockets(port(), 1);
    if (!socket) throw new Error('no socket');
    sockets.push(socket);
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
    });
    await once(socket, 'close');
    expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(closed).toEqual(['timeout']);
  });

  it('answers 408 with a JSON body to a client whose headers do not arrive in time', async () => {
    const [socket] = await idleSockets(port(), 1);
    if (!socket) throw new Error('no socket');
    sockets.push(socket);
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
    });
    socket.write('POST /graphql HTTP/1.1\r\nhost: x\r\n');
    await once(socket, 'close');
    expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(received).toContain('"code":"REQUEST_TIMEOUT"');
    expect(closed).toEqual(['timeout']);
  });
});

describe('npm start under a low file-descriptor limit (ulimit -n 256)', () => {
  afterAll(killSpawned);

  it('keeps /health and GraphQL answering while 400 idle sockets are open, and logs a warning', async () => {
    const gateway = spawnWatched('sh', ['-c', `ulimit -n 256 && exec "${process.execPath}" src/main.ts`], {
      env: {
        PORT: '0',
        HOST: '127.0.0.1',
        PETSTORE_DB: ':memory:',
        UPSTREAM_CONNECTIONS: '8',
        LOG_LEVEL: 'warn',
      },
    });
    const [, url = ''] = await gateway.waitFor(/at (http:\/\/\S+\/graphql)/);
    const [, key = ''] = await gateway.waitFor(/API key for this run: (\S+)/);
    const port = Number(new URL(url).port);

    const crowd = await idleSockets(port, 400);
    try {
      expect(await freshGet(port, '/health')).toBe(200);
      // The crowd's address holds its share of the cap; its silent sockets give way once past
      // the unparsed grace (1 s), so another caller from that address gets in.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const result = await execute(url, ListPets, { limit: 1 }, `Bearer ${key}`);
      expect(result.errors).toBeUndefined();
      expect(result.data?.pets).toHaveLength(1);
      await gateway.waitFor(/client connections closed/, 2000);
      expect(gateway.output()).toMatch(/"level":40.*"evicted":\d+.*client connections closed/);
    } finally {
      for (const socket of crowd) socket.destroy();
    }
  });
});
