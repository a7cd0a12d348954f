// @tier integration

import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ROUTES } from '../../src/contract/routes.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { createUpstreamLog } from '../../src/observability/upstream-log.ts';
import { CircuitBreaker } from '../../src/upstream/breaker.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.ts';
import { UpstreamCancelledError, UpstreamTimeoutError } from '../../src/upstream/errors.ts';
import { createLoaders } from '../../src/upstream/loaders.ts';
import type { AttemptEnd } from '../../src/upstream/observer.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';

// A call whose client went away is cancelled, and that is its own outcome: not a timeout, not a
// failure of the upstream. With a breaker that opens on one failure and an upstream log that
// reports every attempt, a cancelled call must leave both untouched, and must not be retried.

const TOKEN = 'cancellation-token';
const AUTH = `Bearer ${TOKEN}`;
const HOLD_MS = 5000;

let upstream: FakeUpstream;
let client: UpstreamClient;
const attempts: AttemptEnd[] = [];
const retries: string[] = [];
const warnings: string[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '1', status: 'available' });
  const log = createUpstreamLog(createLogger('warn', { write: (line: string) => void warnings.push(line) }));
  client = createUpstreamClient({
    baseUrl: new URL(upstream.url),
    timeoutMs: 8000,
    connections: 4,
    breaker: { failureThreshold: 1, openMs: 60_000 },
    observers: [
      log,
      {
        attempt: () => (end) => void attempts.push(end),
        retry: (_route, reason) => void retries.push(reason),
      },
    ],
  });
});

afterAll(async () => {
  await client.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
  upstream.clearFaults();
  attempts.length = 0;
  retries.length = 0;
  warnings.length = 0;
});

const waitFor = <T>(check: () => T) => vi.waitFor(check, { timeout: 3000, interval: 5 });

/** Neither the breaker, nor a retry, nor the "unreachable" line took the cancellation for a failure. */
function expectNoFailureSeen(): void {
  expect(client.breakerState).toBe('closed');
  expect(retries).toEqual([]);
  expect(warnings).toEqual([]);
  expect(attempts.map((attempt) => attempt.outcome)).not.toContain('timeout');
}

describe('a call whose client went away', () => {
  it('is aborted upstream at once, fails as cancelled, and counts as no failure', async () => {
    const held = upstream.hold(/^\/v1\/pets\?/, HOLD_MS);
    const deadline = client.deadline();
    const call = client.listPets(AUTH, { limit: 5 }, deadline).catch((error: unknown) => error);
    await waitFor(() => expect(held).toHaveLength(1));
    const left = performance.now();
    deadline.abandon();
    expect(await call).toBeInstanceOf(UpstreamCancelledError);
    await waitFor(() => expect(held[0]?.abortedAt).toBeDefined());
    expect((held[0]?.abortedAt as number) - left).toBeLessThan(500);
    expect(attempts.map((attempt) => attempt.outcome)).toEqual(['cancelled']);
    expectNoFailureSeen();
    // The breaker let the next call through (one failure would have opened it).
    upstream.clearFaults();
    expect(await client.listPets(AUTH, { limit: 5 })).toHaveLength(1);
  });

  it('ends a shared GET only when its last waiter leaves, as cancelled even if an earlier one timed out', async () => {
    const held = upstream.hold(/^\/v1\/pets\?/, HOLD_MS);
    const early = client.deadline(50);
    const gone = client.deadline();
    const [timedOut, cancelled] = [early, gone].map((deadline) =>
      client.listPets(AUTH, { limit: 2 }, deadline).catch((error: unknown) => error),
    );
    expect(await timedOut).toBeInstanceOf(UpstreamTimeoutError);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(held).toHaveLength(1);
    expect(held[0]?.abortedAt).toBeUndefined();
    gone.abandon();
    expect(await cancelled).toBeInstanceOf(UpstreamCancelledError);
    await waitFor(() => expect(held[0]?.abortedAt).toBeDefined());
    expectNoFailureSeen();
  });

  it('cancels every call of the operation, not every other one (#64 row 2)', async () => {
    // Each call's hook forgets itself as its call ends; the walk over the hooks must not skip the
    // next one when that happens. Coalescing off, so the calls share nothing but the deadline.
    const plain = createUpstreamClient({
      baseUrl: new URL(upstream.url),
      timeoutMs: 8000,
      connections: 8,
      coalesce: false,
    });
    try {
      const held = upstream.hold(/^\/v1\/pets\?/, HOLD_MS);
      const deadline = plain.deadline();
      const calls = [1, 2, 3, 4].map((limit) =>
        plain.listPets(AUTH, { limit }, deadline).catch((error: unknown) => error),
      );
      await waitFor(() => expect(held).toHaveLength(4));
      deadline.abandon();
      for (const call of calls) expect(await call).toBeInstanceOf(UpstreamCancelledError);
      await waitFor(() => expect(held.filter((request) => request.abortedAt !== undefined)).toHaveLength(4));
    } finally {
      await plain.close();
    }
  });

  it('times out every call of the operation at its deadline, bodies still arriving included', async () => {
    const plain = createUpstreamClient({
      baseUrl: new URL(upstream.url),
      timeoutMs: 400,
      connections: 8,
      coalesce: false,
    });
    try {
      const held = upstream.hold(/^\/v1\/pets\?/, HOLD_MS);
      const deadline = plain.deadline();
      const started = performance.now();
      const calls = [1, 2, 3].map((limit) =>
        plain.listPets(AUTH, { limit }, deadline).catch((error: unknown) => error),
      );
      for (const call of calls) expect(await call).toBeInstanceOf(UpstreamTimeoutError);
      expect(performance.now() - started).toBeLessThan(2000);
      await waitFor(() => expect(held.filter((request) => request.abortedAt !== undefined)).toHaveLength(3));
    } finally {
      await plain.close();
    }
  });

  it('is not sent when the client left before it was made', async () => {
    const loaders = createLoaders(client, AUTH);
    loaders.abandon();
    await expect(loaders.listPets({ limit: 3 })).rejects.toBeInstanceOf(UpstreamCancelledError);
    await expect(
      loaders.write({ route: ROUTES.createPet, body: { name: 'Never', categoryId: '1' } }),
    ).rejects.toBeInstanceOf(UpstreamCancelledError);
    expect(upstream.requests).toEqual([]);
    loaders.release();
  });

  it('lets a POST already sent finish, and its pet is known', async () => {
    const held = upstream.hold(/^\/v1\/pets$/, 300);
    const loaders = createLoaders(client, AUTH);
    const created = loaders.write({ route: ROUTES.createPet, body: { name: 'Kept', categoryId: '1' } });
    await waitFor(() => expect(held).toHaveLength(1));
    loaders.abandon();
    expect((await created)?.name).toBe('Kept');
    expect(held[0]?.abortedAt).toBeUndefined();
    // The same request's later reads are cancelled, as nobody will read them.
    await expect(loaders.listPets({ limit: 3 })).rejects.toBeInstanceOf(UpstreamCancelledError);
    loaders.release();
    expectNoFailureSeen();
  });
});

describe("a deadline the loaders adopt (the one-call path's, when it falls back)", () => {
  it('is the one their calls run under, cancelled when they are', async () => {
    const deadline = client.deadline();
    const loaders = createLoaders(client, AUTH);
    loaders.adoptDeadline(deadline);
    loaders.abandon();
    expect(deadline.reason).toBe('client gone');
    await expect(loaders.listPets({ limit: 3 })).rejects.toBeInstanceOf(UpstreamCancelledError);
    expect(upstream.requests).toEqual([]);
    loaders.release();
  });

  it('is released with them, and never expires after', () => {
    const deadline = client.deadline();
    const loaders = createLoaders(client, AUTH);
    loaders.adoptDeadline(deadline);
    loaders.release();
    deadline.abandon();
    expect(deadline.expired).toBe(false);
  });

  it('starts cancelled when they were abandoned before', () => {
    const deadline = client.deadline();
    const loaders = createLoaders(client, AUTH);
    loaders.abandon();
    loaders.adoptDeadline(deadline);
    expect(deadline.reason).toBe('client gone');
    loaders.release();
  });
});

describe('CircuitBreaker', () => {
  it('frees a half-open probe that was cancelled, counting nothing', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: 100, now: () => now });
    breaker.onFailure();
    now = 100;
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.tryAcquire()).toBe(false);
    breaker.onCancel();
    expect(breaker.state).toBe('half-open');
    expect(breaker.tryAcquire()).toBe(true);
    breaker.onSuccess();
    expect(breaker.state).toBe('closed');
  });
});
