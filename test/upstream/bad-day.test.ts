// @tier integration

import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { createSharedRedis, type SharedRedis } from '../../src/stores/redis.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { ListPets } from '../support/operations.ts';

const TOKEN = 'bad-day-token';

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '9' });
});
afterAll(async () => {
  await upstream.close();
});

/** A gateway whose warn-level log lines land in `lines`, as main.ts wires the upstream log; its breaker reads `clock`. */
async function watched(
  upstreamUrl: string,
  lines: Array<{ msg: string; level: number } & Record<string, unknown>>,
  clock: () => number = Date.now,
) {
  const logger = createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return startGateway({
    upstreamUrl,
    timeoutMs: 500,
    client: {
      retryBaseMs: 1,
      breaker: { failureThreshold: 3, openMs: 300, now: clock },
    },
    gateway: { logger },
  });
}

describe('warn lines on a bad day (LOG_LEVEL=warn)', () => {
  it('one line for an unreachable upstream however many requests fail, and one per breaker transition', async () => {
    const lines: Array<{ msg: string; level: number } & Record<string, unknown>> = [];
    let now = 1_000_000;
    const gateway = await watched(upstream.url, lines, () => now);
    try {
      upstream.fault(/pets/, (_req, res) => {
        res.writeHead(503);
        res.end();
      });
      for (let i = 0; i < 6; i++) {
        const result = await execute(gateway.url, ListPets, { limit: i + 1 }, `Bearer ${TOKEN}`);
        expect(result.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      }
      upstream.clearFaults();
      // Still open one moment before its 300 ms are up; half-open at 300 ms.
      now += 299;
      const early = await execute(gateway.url, ListPets, { limit: 1 }, `Bearer ${TOKEN}`);
      expect(early.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      now += 1;
      const back = await execute(gateway.url, ListPets, { limit: 1 }, `Bearer ${TOKEN}`);
      expect(back.errors).toBeUndefined();

      expect(lines.every((line) => line.level === 40)).toBe(true);
      const unreachable = lines.filter((line) => line.msg.startsWith('upstream unreachable'));
      expect(unreachable).toHaveLength(1);
      expect(unreachable[0]?.unavailable).toBe(1);
      expect(lines.filter((line) => 'breaker' in line).map((line) => line.breaker)).toEqual([
        'open',
        'half-open',
        'closed',
      ]);
      for (const line of lines) expect(JSON.stringify(line)).not.toContain(TOKEN);
    } finally {
      upstream.clearFaults();
      await gateway.close();
    }
  });
});

describe('/health and /readiness say why', () => {
  let gateway: RunningGateway;
  let dead: RunningGateway;
  let redis: SharedRedis;

  beforeAll(async () => {
    // A Redis nobody listens on: down at the first refused connection.
    redis = createSharedRedis('redis://127.0.0.1:1');
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      gateway: {
        redis: {
          get state() {
            return redis.state;
          },
          uses: ['response cache'],
        },
      },
    });
    dead = await startGateway({ upstreamUrl: 'http://127.0.0.1:1/v1', timeoutMs: 500 });
    for (let i = 0; i < 100 && redis.state !== 'down'; i++) await sleep(20);
  });
  afterAll(async () => {
    await gateway.close();
    await dead.close();
    await redis.close();
  });

  it('/health: 200 with the breaker and Redis state; Redis down is only reported', async () => {
    const health = await fetch(`${gateway.origin}/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await health.json()).toEqual({
      status: 'ok',
      upstream: { breaker: 'closed' },
      redis: 'down',
      degraded: ['response cache'],
      streams: { subscriptions: 0, webSockets: 0 },
    });
  });

  it('/readiness: 200 with Redis down (a cache is not a reason to take the gateway out), 503 with the upstream unreachable', async () => {
    const ready = await fetch(`${gateway.origin}/readiness`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      upstream: { reachable: true, breaker: 'closed' },
      redis: 'down',
      degraded: ['response cache'],
      streams: { subscriptions: 0, webSockets: 0 },
    });
    const notReady = await fetch(`${dead.origin}/readiness?probe=lb`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({
      status: 'not ready',
      upstream: { reachable: false, breaker: 'closed' },
      streams: { subscriptions: 0, webSockets: 0 },
    });
    expect(await (await fetch(`${dead.origin}/health`)).json()).toEqual({
      status: 'ok',
      upstream: { breaker: 'closed' },
      streams: { subscriptions: 0, webSockets: 0 },
    });
  });
});
