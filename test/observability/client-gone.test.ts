// @tier integration

import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { postOnOwnConnection } from '../support/graphql.ts';

// A client that hangs up before its answer is written is one outcome, whichever path serves its
// request: its log line says `client_gone` with status 499, and /metrics counts its HTTP request
// under statusCode="499" (never as a 200 it was not sent). Every path: Yoga's lane (a document
// seen for the first time), the fast lane's one-call path and its plans, and both batch paths.

const TOKEN = 'client-gone-token';
const lines: Array<Record<string, unknown>> = [];
const metrics = createMetrics();
let upstream: FakeUpstream;
let gateway: RunningGateway;

useGateway(
  {
    tokens: [TOKEN],
    seed: (fake) => fake.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '1', status: 'available' }),
    gateway: {
      timeoutMs: 9000,
      metrics,
      gateway: {
        logger: createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) }),
      },
    },
  },
  (started) => ({ upstream, gateway } = started),
);

function send(body: unknown) {
  return postOnOwnConnection(gateway.url, body, { authorization: `Bearer ${TOKEN}` });
}

async function answered(body: unknown): Promise<number> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

/** HTTP requests /metrics counts under each status. */
async function httpCounts(): Promise<Record<string, number>> {
  const metric = await metrics.registry.getSingleMetric('pet_gateway_http_request_duration_seconds')?.get();
  const counts: Record<string, number> = {};
  for (const value of metric?.values ?? []) {
    if (!(value as { metricName?: string }).metricName?.endsWith('_count')) continue;
    const status = String(value.labels.statusCode);
    counts[status] = (counts[status] ?? 0) + value.value;
  }
  return counts;
}

const PATHS: Array<{ path: string; body: unknown; calls: number; names: string[] }> = [
  {
    path: "Yoga's lane",
    body: { query: 'query Fresh { pets(limit: 11) { id } }' },
    calls: 1,
    names: ['Fresh'],
  },
  {
    path: 'the one-call path',
    body: { query: 'query One { pets(limit: 12) { id } }' },
    calls: 1,
    names: ['One'],
  },
  {
    path: 'a plan',
    body: { query: 'query Plan { a: pets(limit: 13) { id } b: pets(limit: 14) { name } }' },
    calls: 2,
    names: ['Plan'],
  },
  {
    path: "a batch's one-call path",
    body: [
      { query: 'query B1 { pets(limit: 15) { id } }' },
      { query: 'query B2 { pets(limit: 16) { id } }' },
    ],
    calls: 2,
    names: ['B1', 'B2'],
  },
  {
    path: 'a batch on shared loaders',
    body: [
      { query: 'query S1 { pets(limit: 17) { id } }' },
      { query: 'query S2 { pets(limit: 17) { name } }' },
    ],
    calls: 1,
    names: ['S1', 'S2'],
  },
];

describe('a client gone before its answer', () => {
  it.each(PATHS)('is 499 in its log line and in /metrics: $path', async ({ path, body, calls, names }) => {
    // Prepared for the fast lane (answered three times), except the document Yoga sees first.
    if (path !== "Yoga's lane") for (let i = 0; i < 3; i++) expect(await answered(body)).toBe(200);
    const before = await httpCounts();
    const held = upstream.hold(/^\/v1\/pets\?/, 1500);
    try {
      const req = send(body);
      await vi.waitFor(() => expect(held).toHaveLength(calls), { timeout: 3000, interval: 5 });
      req.destroy();
      for (const operationName of names) {
        await vi.waitFor(
          () =>
            expect(lines).toContainEqual(
              expect.objectContaining({
                msg: 'operation',
                operationName,
                outcome: 'client_gone',
                status: 499,
              }),
            ),
          { timeout: 3000, interval: 5 },
        );
      }
      await vi.waitFor(async () => expect((await httpCounts())['499'] ?? 0).toBe((before['499'] ?? 0) + 1), {
        timeout: 3000,
        interval: 20,
      });
      expect((await httpCounts())['200'] ?? 0).toBe(before['200'] ?? 0);
    } finally {
      upstream.clearFaults();
    }
  });
});
