import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, expect, vi } from 'vitest';
import { DEFAULT_LIMITS, type Limits } from '../../src/config.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import type { RateLimit } from '../../src/policy/rate-limit.ts';
import { createMemoryDocumentStore } from '../../src/stores/registered-documents.ts';
import type { ResponseCacheOptions } from '../../src/upstream/cached-calls.ts';
import { type FakeUpstream, seedPets, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { postOnOwnConnection } from '../support/graphql.ts';

// The sides the fast lane's tests compare: gateways on one fake upstream that differ only in the
// lane that answers, each with its own log and metrics, and one way to send them a request and
// read its answer byte for byte.

export const TOKEN = 'lanes-token';
export const AUTH = `Bearer ${TOKEN}`;
export const DOCUMENT_ID = 'sha256:lanes-list';
const PERSISTED = '{ pets(limit: 2) { id name } }';

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
export const persistedQuery = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
export const APQ_LIST = 'query ApqList($limit: Int) { pets(limit: $limit) { id name status } }';
export const APQ_PET = 'query ApqPet($id: ID!) { pet(id: $id) { id name } }';
export const APQ_ADD =
  'mutation ApqAdd($name: String!) { createPet(input: { name: $name, categoryId: "2" }) { name } }';

export interface Side {
  gateway: RunningGateway;
  logs: string[];
  metrics: Metrics;
}

/** The fake upstream every side calls, with the token the requests carry and the seeded pets. */
export async function startLanesUpstream(): Promise<FakeUpstream> {
  const upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  seedPets(upstream, TOKEN);
  return upstream;
}

/** The deadline of every side's upstream calls (UPSTREAM_TIMEOUT_MS). */
export const TIMEOUT_MS = 400;

export async function side(
  upstream: FakeUpstream,
  fastLane: boolean,
  rateLimit?: RateLimit,
  cache?: ResponseCacheOptions,
  plans = true,
  limits: Partial<Limits> = {},
): Promise<Side> {
  const logs: string[] = [];
  const metrics = createMetrics();
  const gateway = await startGateway({
    upstreamUrl: upstream.url,
    ...(cache ? { cache } : {}),
    timeoutMs: TIMEOUT_MS,
    // A name maximum, as NAME_MAX_LENGTH sets one: both lanes refuse past it alike.
    limits: { ...DEFAULT_LIMITS, nameMaxLength: 200, ...limits },
    // One attempt, no breaker surprises: a fault must hit both sides identically.
    client: { maxRetries: 0 },
    gateway: {
      fastLane,
      plans,
      metrics,
      logger: createLogger('info', { write: (line: string) => void logs.push(line) }),
      persistedOperations: { mode: 'allow', documents: new Map([[DOCUMENT_ID, PERSISTED]]) },
      // Each side registers APQ documents in a store of its own.
      automaticPersistedQueries: createMemoryDocumentStore(),
      ...(rateLimit ? { rateLimit } : {}),
    },
  });
  return { gateway, logs, metrics };
}

/**
 * The three sides the corpus goes to, on one upstream: Yoga alone (FAST_LANE=off), the fast lane
 * with compiled execution only (PLANS=off), and the defaults (plans).
 */
export interface ThreeSides {
  upstream: FakeUpstream;
  yoga: Side;
  compiled: Side;
  fast: Side;
}

async function startThreeSides(): Promise<ThreeSides> {
  const upstream = await startLanesUpstream();
  return {
    upstream,
    yoga: await side(upstream, false),
    compiled: await side(upstream, true, undefined, undefined, false),
    fast: await side(upstream, true),
  };
}

/**
 * The three sides for the test file that calls it: started before its tests and closed after them,
 * the upstream's faults and recorded requests cleared before each test. The object is filled in
 * once they have started, so tests read its sides when they run.
 */
export function useThreeSides(): ThreeSides {
  const sides = {} as ThreeSides;
  beforeAll(async () => {
    Object.assign(sides, await startThreeSides());
  });
  afterAll(async () => {
    for (const { gateway } of [sides.yoga, sides.compiled, sides.fast]) await gateway.close();
    await sides.upstream.close();
  });
  beforeEach(() => {
    sides.upstream.clearFaults();
    sides.upstream.requests.length = 0;
  });
  return sides;
}

/** An operation's parameters, or a batch of them. */
export type Body = Record<string, unknown> | Array<Record<string, unknown>>;

/** One request sent alike to every side. */
export interface Case {
  name: string;
  body: Body;
  /** A body with the same document that succeeds, sent first so the fast lane prepares it. @default body */
  warm?: Body;
  /** Sent once to each side before warming (an APQ registration, over POST). */
  register?: Body;
  /** @default 'POST' */
  method?: 'GET';
  headers?: Record<string, string>;
  /** Installs an upstream fault before each side's request. */
  setup?: (upstream: FakeUpstream) => void;
  /** The first error's code; undefined for a success, which the fast lane must serve itself. */
  code?: string;
  /** The request never reaches the fast lane's execution (Yoga serves it whole). */
  yogaOnly?: boolean;
  /** A success no plan can answer (the compiled path does). @default false */
  unplanned?: boolean;
}

export interface Answer {
  status: number;
  body: string;
  /** The body decompressed. */
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

export async function send(
  target: Side,
  body: Body,
  extra: Record<string, string> = {},
  method: 'GET' | 'POST' = 'POST',
): Promise<Answer> {
  const headers: Record<string, string> = {
    ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    authorization: AUTH,
    'x-request-id': 'lanes-1',
    ...extra,
  };
  if (headers.authorization === '') delete headers.authorization;
  // Over GET the parameters go in the query string, JSON ones as JSON (GraphQL over HTTP).
  const search = new URLSearchParams(
    Object.entries(Array.isArray(body) ? {} : body).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : JSON.stringify(value),
    ]),
  );
  const response = await request(method === 'GET' ? `${target.gateway.url}?${search}` : target.gateway.url, {
    method,
    headers,
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
  });
  const { date: _date, ...rest } = response.headers;
  const raw = Buffer.from(await response.body.arrayBuffer());
  const encoding = rest['content-encoding'];
  // Compressed answers are compared as bytes, and read decompressed.
  const decoded = encoding === 'gzip' ? gunzipSync(raw) : encoding === 'br' ? brotliDecompressSync(raw) : raw;
  return {
    status: response.statusCode,
    body: encoding ? raw.toString('base64') : raw.toString(),
    text: decoded.toString(),
    headers: rest,
  };
}

export function operationLines(logs: string[]) {
  return logs
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === 'operation' || line.msg === 'deprecated field used')
    .map(({ time: _t, durationMs: _d, pid: _p, hostname: _h, ...rest }) => rest);
}

/**
 * Warms each side with the case: registered first where it registers, then its warm-up (or its
 * body) three times, so the fast lane holds it prepared; the logs are cleared after.
 */
export async function warmUp(sides: readonly Side[], c: Case): Promise<void> {
  if (c.register) for (const target of sides) await send(target, c.register, c.headers);
  for (let run = 0; run < 3; run++) {
    for (const target of sides) await send(target, c.warm ?? c.body, c.headers, c.method);
  }
  for (const target of sides) target.logs.length = 0;
}

/**
 * Sends the case's body to each side in turn, its fault set up afresh for each. Every side's
 * answer, upstream calls and log lines must be the first side's (Yoga's); returns the answers, in
 * the sides' order.
 */
export async function sendAlike(upstream: FakeUpstream, sides: readonly Side[], c: Case): Promise<Answer[]> {
  const answers: Answer[] = [];
  const calls: string[][] = [];
  for (const target of sides) {
    upstream.clearFaults();
    upstream.requests.length = 0;
    c.setup?.(upstream);
    answers.push(await send(target, c.body, c.headers, c.method));
    calls.push(upstream.requests.map((r) => `${r.method} ${r.path} ${r.body}`));
  }
  const [first, ...others] = sides as [Side, ...Side[]];
  others.forEach((target, i) => {
    expect(answers[i + 1]).toEqual(answers[0]);
    expect(calls[i + 1]).toEqual(calls[0]);
    expect(operationLines(target.logs)).toEqual(operationLines(first.logs));
  });
  expect(operationLines(first.logs).length).toBeGreaterThan(0);
  return answers;
}

/**
 * What a side's /metrics counted, for comparing sides: the operation, error and deprecated-use
 * series whole, and the HTTP requests (by method and status) and operations it timed, by label.
 */
export async function countedSeries(metrics: Metrics) {
  const all = await metrics.registry.getMetricsAsJSON();
  const series = all
    .filter((metric) =>
      [
        'pet_gateway_operations_total',
        'pet_gateway_errors_total',
        'pet_gateway_deprecated_field_use_total',
      ].includes(metric.name),
    )
    .map((metric) => ({ name: metric.name, values: metric.values }));
  const timed = all
    .filter((metric) =>
      ['pet_gateway_http_request_duration_seconds', 'pet_gateway_operation_duration_seconds'].includes(
        metric.name,
      ),
    )
    .flatMap((metric) =>
      metric.values
        .filter((value) => (value as { metricName?: string }).metricName?.endsWith('_count'))
        .map((value) => ({ name: metric.name, labels: value.labels, value: value.value })),
    );
  return { series, timed };
}

/** HTTP requests a side's /metrics counted under `status`. */
async function requestsWithStatus(metrics: Metrics, status: number): Promise<number> {
  const { timed } = await countedSeries(metrics);
  return timed
    .filter(
      ({ name, labels }) =>
        name === 'pet_gateway_http_request_duration_seconds' && String(labels.statusCode) === String(status),
    )
    .reduce((sum, { value }) => sum + value, 0);
}

/**
 * Holds every `GET /pets` three times the sides' deadline, and notes each: a call ends only when
 * the gateway gives it up (its client gone, or its deadline passed).
 */
export const holdLists = (upstream: FakeUpstream) => upstream.hold(/^\/v1\/pets\?/, TIMEOUT_MS * 3);

/**
 * Sends the case's body to each side in turn, over a connection of its own, and hangs up as soon
 * as the upstream holds the `calls` it makes (long before the deadline); then waits for the side to
 * give each call up, write its operations' lines and count the request in /metrics. Every side's
 * upstream calls and log lines must be the first side's (Yoga's).
 */
export async function hangUpAlike(
  upstream: FakeUpstream,
  sides: readonly Side[],
  c: Pick<Case, 'body' | 'headers'>,
  calls: number,
): Promise<void> {
  const made: string[][] = [];
  const entries = Array.isArray(c.body) ? c.body.length : 1;
  const wait = { timeout: TIMEOUT_MS * 5, interval: 5 };
  for (const target of sides) {
    upstream.clearFaults();
    upstream.requests.length = 0;
    target.logs.length = 0;
    const held = holdLists(upstream);
    const gone = await requestsWithStatus(target.metrics, 499);
    const req = postOnOwnConnection(target.gateway.url, c.body, {
      authorization: AUTH,
      'x-request-id': 'lanes-1',
      ...c.headers,
    });
    await vi.waitFor(() => expect(held).toHaveLength(calls), wait);
    req.destroy();
    await vi.waitFor(() => expect(held.every((call) => call.abortedAt !== undefined)).toBe(true), wait);
    await vi.waitFor(() => expect(operationLines(target.logs)).toHaveLength(entries), wait);
    await vi.waitFor(async () => expect(await requestsWithStatus(target.metrics, 499)).toBe(gone + 1), wait);
    made.push(upstream.requests.map((r) => `${r.method} ${r.path} ${r.body}`));
  }
  const [first, ...others] = sides as [Side, ...Side[]];
  for (const line of operationLines(first.logs))
    expect(line).toMatchObject({ status: 499, outcome: 'client_gone' });
  others.forEach((target, i) => {
    expect(made[i + 1]).toEqual(made[0]);
    expect(operationLines(target.logs)).toEqual(operationLines(first.logs));
  });
}
