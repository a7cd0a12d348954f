// @tier alone: holds timeouts to within 250 ms, which another file's load would blur

import { spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/upstream/breaker.ts';
import { type FakeUpstream, type Fault, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { CreatePet, ListPets } from '../support/operations.ts';

const TOKEN = 'resilience-token';
const AUTH = `Bearer ${TOKEN}`;
const TIMEOUT_MS = 600;

let upstream: FakeUpstream;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '1', status: 'available' });
});

afterAll(async () => {
  await upstream.close();
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

afterEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
});

const status =
  (code: number, headers: Record<string, string> = {}): Fault =>
  (_req, res: ServerResponse) => {
    res.writeHead(code, headers);
    res.end();
  };
const reset: Fault = (req) => {
  req.socket.destroy();
};
const pets = () => upstream.requests.filter((r) => r.path.startsWith('/v1/pets'));

/** Active handles by type, to show that a scenario leaves no socket or timer behind. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

async function withGateway<T>(
  options: Omit<Parameters<typeof startGateway>[0], 'upstreamUrl'>,
  run: (gateway: RunningGateway) => Promise<T>,
): Promise<T> {
  const before = resources();
  const gateway = await startGateway({ upstreamUrl: upstream.url, ...options });
  try {
    return await run(gateway);
  } finally {
    await gateway.close();
    // The upstream's server side of the pool's sockets closes a tick later.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = resources();
    expect(after.Timeout ?? 0).toBeLessThanOrEqual(before.Timeout ?? 0);
    expect(after.TCPSocketWrap ?? 0).toBeLessThanOrEqual(before.TCPSocketWrap ?? 0);
  }
}

describe('retries: idempotent GETs only', () => {
  it.each([
    ['503', status(503)],
    ['502', status(502)],
    ['504', status(504)],
    ['a reset before headers', reset],
  ])('retries a GET after %s, and succeeds when the upstream recovers', async (_name, fault) => {
    await withGateway({ timeoutMs: 2000 }, async (gateway) => {
      upstream.fault(/^\/v1\/pets/, fault, 2);
      const result = await execute(gateway.url, ListPets, {}, AUTH);
      expect(result.errors).toBeUndefined();
      expect(result.data?.pets).toHaveLength(1);
      expect(pets()).toHaveLength(3);
    });
  });

  it('gives up after 2 retries (3 attempts) with UPSTREAM_UNAVAILABLE', async () => {
    await withGateway({ timeoutMs: 2000 }, async (gateway) => {
      upstream.fault(/^\/v1\/pets/, status(503));
      const result = await execute(gateway.url, ListPets, {}, AUTH);
      expect(result.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
      expect(pets()).toHaveLength(3);
    });
  });

  it.each([
    ['503', status(503)],
    ['a reset before headers', reset],
    ['429 with a short Retry-After', status(429, { 'retry-after': '0' })],
  ])('never retries createPet after %s: exactly one POST', async (_name, fault) => {
    await withGateway({ timeoutMs: 2000 }, async (gateway) => {
      upstream.fault(/^\/v1\/pets/, fault);
      const result = await execute(
        gateway.url,
        CreatePet,
        { input: { name: 'Once', categoryId: '1' } },
        AUTH,
      );
      expect(result.errors?.[0]?.extensions?.code).toMatch(/^UPSTREAM_/);
      expect(upstream.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    });
  });

  it('retries a 429 whose Retry-After ends inside the deadline', async () => {
    await withGateway({ timeoutMs: 3000 }, async (gateway) => {
      upstream.fault(/^\/v1\/pets/, status(429, { 'retry-after': '1' }), 1);
      const result = await execute(gateway.url, ListPets, {}, AUTH);
      expect(result.errors).toBeUndefined();
      expect(pets()).toHaveLength(2);
    });
  });

  it('does not wait for a 429 whose Retry-After ends past the deadline', async () => {
    await withGateway({ timeoutMs: 1000 }, async (gateway) => {
      upstream.fault(/^\/v1\/pets/, status(429, { 'retry-after': '60' }));
      const result = await execute(gateway.url, ListPets, {}, AUTH);
      expect(result.errors?.[0]?.extensions).toEqual({
        code: 'UPSTREAM_RATE_LIMITED',
        status: 429,
        retryAfter: 60,
      });
      expect(pets()).toHaveLength(1);
    });
  });
});

describe('the whole-operation deadline', () => {
  it('a slow drip cannot stretch it: the answer comes by deadline + 250 ms', async () => {
    await withGateway({ timeoutMs: TIMEOUT_MS }, async (gateway) => {
      upstream.fault(/^\/v1\/pets/, (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => res.write(' '), 20);
        res.on('close', () => clearInterval(timer));
      });
      const started = performance.now();
      const result = await execute(gateway.url, ListPets, {}, AUTH);
      expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 250);
      expect(result.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_TIMEOUT' });
    });
  });

  it('a connect that never completes is UPSTREAM_TIMEOUT by deadline + 250 ms', async () => {
    // A listener whose process never accepts: once its backlog is full, the kernel drops new SYNs
    // and a connect hangs, as behind a black-holing firewall, but on loopback.
    const listener = spawn(
      process.execPath,
      [
        '-e',
        `const s = require('net').createServer();
         s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
           console.log(s.address().port);
           setTimeout(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30000), 50);
         });`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const fillers: Socket[] = [];
    try {
      const port = await new Promise<number>((resolve) =>
        listener.stdout?.once('data', (data) => resolve(Number(String(data).trim()))),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (let i = 0; i < 4; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => {}));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const gateway = await startGateway({
        upstreamUrl: `http://127.0.0.1:${port}/v1`,
        timeoutMs: TIMEOUT_MS,
      });
      try {
        const started = performance.now();
        const result = await execute(gateway.url, ListPets, {}, AUTH);
        expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 250);
        expect(result.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_TIMEOUT' });
      } finally {
        await gateway.close();
      }
    } finally {
      for (const socket of fillers) socket.destroy();
      listener.kill('SIGKILL');
    }
  });

  it('retries and backoffs share the one deadline', async () => {
    await withGateway({ timeoutMs: TIMEOUT_MS, client: { retryBaseMs: 10_000 } }, async (gateway) => {
      upstream.fault(/^\/v1\/pets/, status(503));
      const started = performance.now();
      const result = await execute(gateway.url, ListPets, {}, AUTH);
      expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 250);
      // Either the backoff was cut by the deadline, or jitter made it short enough to give up cleanly.
      expect(['UPSTREAM_TIMEOUT', 'UPSTREAM_UNAVAILABLE']).toContain(result.errors?.[0]?.extensions?.code);
    });
  });
});

describe('the circuit breaker', () => {
  it('opens after repeated failures, fails fast without calling, then half-opens and recovers', async () => {
    await withGateway(
      { timeoutMs: 2000, client: { maxRetries: 0, breaker: { failureThreshold: 3, openMs: 300 } } },
      async (gateway) => {
        upstream.fault(/^\/v1\/pets/, status(503));
        for (let i = 0; i < 3; i++) await execute(gateway.url, ListPets, {}, AUTH);
        expect(pets()).toHaveLength(3);

        const open = await execute(gateway.url, ListPets, {}, AUTH);
        expect(open.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
        expect(pets()).toHaveLength(3); // refused without a call

        upstream.clearFaults();
        await new Promise((resolve) => setTimeout(resolve, 350));
        const probe = await execute(gateway.url, ListPets, {}, AUTH);
        expect(probe.errors).toBeUndefined();
        expect(pets()).toHaveLength(4);
        const closed = await execute(gateway.url, ListPets, {}, AUTH);
        expect(closed.errors).toBeUndefined();
      },
    );
  });

  it('does not count the caller’s own 4xx as upstream failures', async () => {
    await withGateway(
      { client: { maxRetries: 0, breaker: { failureThreshold: 2, openMs: 60_000 } } },
      async (gateway) => {
        for (let i = 0; i < 5; i++) await execute(gateway.url, ListPets, {}, 'Bearer wrong-key');
        const result = await execute(gateway.url, ListPets, {}, AUTH);
        expect(result.errors).toBeUndefined();
        expect(pets()).toHaveLength(6);
      },
    );
  });
});

describe('CircuitBreaker', () => {
  it('lets exactly one probe through when half-open, and reopens if it fails', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 2, openMs: 100, now: () => now });
    expect(breaker.tryAcquire()).toBe(true);
    breaker.onFailure();
    expect(breaker.state).toBe('closed');
    breaker.onFailure();
    expect(breaker.state).toBe('open');
    expect(breaker.tryAcquire()).toBe(false);
    now = 100;
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.state).toBe('half-open');
    expect(breaker.tryAcquire()).toBe(false);
    breaker.onFailure();
    expect(breaker.state).toBe('open');
    now = 199;
    expect(breaker.tryAcquire()).toBe(false);
    now = 200;
    expect(breaker.tryAcquire()).toBe(true);
    breaker.onSuccess();
    expect(breaker.state).toBe('closed');
    expect(breaker.tryAcquire()).toBe(true);
  });
});
