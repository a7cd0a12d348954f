import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRateLimit, type RateLimit } from '../../src/http/rate-limit.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import { BIG_ID, type FakeUpstream, seedPets, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';

// One behaviour, two lanes. The same requests go to a gateway with FAST_LANE off (Yoga answers
// everything) and to one with the fast lane on, after the document has been warmed so the fast lane
// holds it prepared. Status, body bytes, every header but Date, the upstream calls, the operation
// log line and the metrics must be the same. Successes must be served by the fast lane; failures
// are executed by it and answered by Yoga from that result, never executed twice.

const TOKEN = 'lanes-token';
const AUTH = `Bearer ${TOKEN}`;
const DOCUMENT_ID = 'sha256:lanes-list';
const PERSISTED = '{ pets(limit: 2) { id name } }';

interface Side {
  gateway: RunningGateway;
  logs: string[];
  metrics: Metrics;
}

let upstream: FakeUpstream;
let yoga: Side;
let fast: Side;

async function side(fastLane: boolean, rateLimit?: RateLimit): Promise<Side> {
  const logs: string[] = [];
  const metrics = createMetrics();
  const gateway = await startGateway({
    upstreamUrl: upstream.url,
    timeoutMs: 400,
    // One attempt, no breaker surprises: a fault must hit both sides identically.
    client: { maxRetries: 0 },
    gateway: {
      fastLane,
      metrics,
      logger: createLogger('info', { write: (line: string) => void logs.push(line) }),
      persistedOperations: { mode: 'allow', documents: new Map([[DOCUMENT_ID, PERSISTED]]) },
      ...(rateLimit ? { rateLimit } : {}),
    },
  });
  return { gateway, logs, metrics };
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  seedPets(upstream, TOKEN);
  yoga = await side(false);
  fast = await side(true);
});

afterAll(async () => {
  await yoga.gateway.close();
  await fast.gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
});

type Body = Record<string, unknown>;

interface Case {
  name: string;
  body: Body;
  /** A body with the same document that succeeds, sent first so the fast lane prepares it. @default body */
  warm?: Body;
  headers?: Record<string, string>;
  /** Installs an upstream fault before each side's request. */
  setup?: () => void;
  /** The first error's code; undefined for a success, which the fast lane must serve itself. */
  code?: string;
  /** The request never reaches the fast lane's execution (Yoga serves it whole). */
  yogaOnly?: boolean;
}

const headersFault = (extra: Record<string, string>) => () =>
  upstream.fault(
    /^\/v1\/pets\/2$/,
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...extra });
      res.end('{"id":2,"name":"Tom","categoryId":1,"status":"sold"}');
    },
    1,
  );

const cases: Case[] = [
  { name: 'a list with every field', body: { query: '{ pets(limit: 20) { id name categoryId status } }' } },
  {
    name: 'aliases, __typename, a status filter and an operation name',
    body: {
      query: 'query Sold { a: pets(status: SOLD, limit: 2) { __typename id } b: pets(limit: 1) { n: name } }',
    },
  },
  {
    name: 'variables, an id beyond 2^53 and the deprecated pet(id)',
    body: {
      query:
        'query Both($limit: Int, $id: ID!) { pets(limit: $limit) { id } pet(id: $id) { name categoryId } }',
      variables: { limit: 3, id: BIG_ID },
    },
  },
  {
    name: "the upstream's own Deprecation and Sunset carried over",
    body: { query: 'query One($id: ID!) { pet(id: $id) { id name status } }', variables: { id: '2' } },
    setup: headersFault({ deprecation: '@1700000000', sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' }),
  },
  {
    name: 'a client name and version on a deprecated field (log and metric)',
    body: { query: '{ pet(id: "3") { name } }' },
    headers: { 'graphql-client-name': 'ios-app', 'graphql-client-version': '4.2.0' },
  },
  {
    name: 'createPet, sent exactly once per request',
    body: {
      query: 'mutation Add($input: NewPetInput!) { createPet(input: $input) { name categoryId status } }',
      variables: { input: { name: 'Kit', categoryId: '9223372036854775807', status: 'PENDING' } },
    },
  },
  { name: 'a persisted documentId', body: { documentId: DOCUMENT_ID } },
  {
    name: 'Accept: application/graphql-response+json',
    body: { query: '{ pets(limit: 1) { id } }' },
    headers: { accept: 'application/graphql-response+json' },
  },
  {
    name: 'Accept: a client list (graphql-response+json, application/json)',
    body: { query: '{ pets(limit: 1) { id } }' },
    headers: { accept: 'application/graphql-response+json, application/json' },
  },
  { name: 'Accept: */*', body: { query: '{ pets(limit: 1) { id } }' }, headers: { accept: '*/*' } },
  {
    name: 'a browser Origin (CORS headers)',
    body: { query: '{ pets(limit: 1) { id } }' },
    headers: { origin: 'https://app.example', accept: 'application/json' },
  },
  {
    name: 'Accept-Encoding: gzip on an answer over the threshold (compressed)',
    body: {
      query: `{ ${Array.from({ length: 8 }, (_, i) => `a${i}: pets(limit: 20) { ...P }`).join(' ')} } fragment P on Pet { id name categoryId status }`,
    },
    headers: { 'accept-encoding': 'gzip' },
  },
  {
    name: 'Accept-Encoding: br, gzip (brotli chosen)',
    body: {
      query: `{ ${Array.from({ length: 8 }, (_, i) => `b${i}: pets(limit: 20) { ...P }`).join(' ')} } fragment P on Pet { id name categoryId status }`,
    },
    headers: { 'accept-encoding': 'br, gzip' },
  },
  {
    name: 'Accept-Encoding on a small answer (sent as it is)',
    body: { query: '{ pets(limit: 1) { name } }' },
    headers: { 'accept-encoding': 'gzip, deflate, br' },
  },
  {
    name: 'Authorization with a lowercase scheme (forwarded as Bearer)',
    body: { query: '{ pets(limit: 2) { name status } }' },
    headers: { authorization: `bearer ${TOKEN}` },
  },
  {
    name: 'an ID variable sent as a JSON number past 2^53 (rounded, refused)',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: 2 ** 53 + 2 } },
    yogaOnly: true,
  },
  {
    name: 'an upstream 404 after the document was prepared',
    code: 'PET_NOT_FOUND',
    warm: { query: 'query Pet($id: ID!) { pet(id: $id) { id name } }', variables: { id: '2' } },
    body: { query: 'query Pet($id: ID!) { pet(id: $id) { id name } }', variables: { id: '404' } },
  },
  {
    name: 'an upstream 500 Error body on a list',
    code: 'BOOM',
    body: { query: '{ pets(limit: 2) { id } }' },
    setup: () =>
      upstream.fault(
        /^\/v1\/pets/,
        (_req, res) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"code":"BOOM","message":"exploded","status":500}');
        },
        1,
      ),
  },
  {
    name: 'an upstream that never answers (deadline)',
    code: 'UPSTREAM_TIMEOUT',
    body: { query: '{ pets(limit: 4) { id } }' },
    setup: () => upstream.fault(/^\/v1\/pets/, () => {}, 1),
  },
  {
    name: 'a limit outside 1..100 in variables',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query L($l: Int) { pets(limit: $l) { id } }', variables: { l: 2 } },
    body: { query: 'query L($l: Int) { pets(limit: $l) { id } }', variables: { l: 101 } },
  },
  {
    name: 'a variable of the wrong type',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: { nested: true } } },
  },
  {
    name: 'a missing required variable',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: {} },
  },
  {
    name: 'an id out of int64 range',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '9223372036854775808' } },
  },
  {
    name: 'no Authorization header',
    code: 'UNAUTHENTICATED',
    body: { query: '{ pets(limit: 5) { id name } }' },
    headers: { authorization: '' },
  },
  {
    name: 'a key the upstream refuses',
    code: 'UNAUTHENTICATED',
    body: { query: '{ pets(limit: 6) { id name } }' },
    headers: { authorization: 'Bearer not-a-known-key' },
  },
  {
    name: 'a cost over the limit, decided by the variables',
    code: 'COST_LIMIT_EXCEEDED',
    warm: {
      query:
        'query C($l: Int) { a: pets(limit: $l) { id name categoryId } b: pets(limit: $l) { id name categoryId } c: pets(limit: $l) { id name } d: pets(limit: $l) { id } e: pets(limit: $l) { id name categoryId } }',
      variables: { l: 1 },
    },
    body: {
      query:
        'query C($l: Int) { a: pets(limit: $l) { id name categoryId } b: pets(limit: $l) { id name categoryId } c: pets(limit: $l) { id name } d: pets(limit: $l) { id } e: pets(limit: $l) { id name categoryId } }',
      variables: { l: 100 },
    },
  },
  {
    name: 'a lone surrogate in createPet input.name (refused, nothing sent)',
    code: 'BAD_USER_INPUT',
    body: {
      query: 'mutation Odd($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Rex\ud800', categoryId: '1' } },
    },
    warm: {
      query: 'mutation Odd($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Warm', categoryId: '1' } },
    },
  },
  {
    name: 'a createPet the upstream refuses, sent once',
    code: 'PET_EXISTS',
    body: {
      query: 'mutation Again($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Rex', categoryId: '1' } },
    },
    setup: () =>
      upstream.fault(
        /^\/v1\/pets$/,
        (_req, res) => {
          res.writeHead(409, { 'content-type': 'application/json' });
          res.end('{"code":"PET_EXISTS","message":"Rex is already here.","status":409}');
        },
        1,
      ),
  },
  {
    name: 'an operation name the document does not hold (never prepared)',
    code: 'OPERATION_RESOLUTION_FAILURE',
    warm: { query: 'query One { pets(limit: 1) { id } }', operationName: 'One' },
    body: { query: 'query One { pets(limit: 1) { id } }', operationName: 'Two' },
    yogaOnly: true,
  },
  {
    name: 'extensions in the body (Yoga reads them)',
    body: { query: '{ pets(limit: 1) { name } }', extensions: { anything: true } },
    yogaOnly: true,
  },
];

interface Answer {
  status: number;
  body: string;
  /** The body decompressed. */
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

async function send(target: Side, body: Body, extra: Record<string, string> = {}): Promise<Answer> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: AUTH,
    'x-request-id': 'lanes-1',
    ...extra,
  };
  if (headers.authorization === '') delete headers.authorization;
  const response = await request(target.gateway.url, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
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

function operationLines(logs: string[]) {
  return logs
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === 'operation' || line.msg === 'deprecated field used')
    .map(({ time: _t, durationMs: _d, pid: _p, hostname: _h, ...rest }) => rest);
}

describe('the fast lane answers exactly as Yoga does', () => {
  it.each(cases)('$name', async (c) => {
    for (let run = 0; run < 3; run++) {
      await send(yoga, c.warm ?? c.body, c.headers);
      await send(fast, c.warm ?? c.body, c.headers);
    }
    yoga.logs.length = 0;
    fast.logs.length = 0;
    const lanes = fast.gateway.lanes;
    if (!lanes) throw new Error('the fast lane is off');
    const servedBefore = lanes.served.fast;

    upstream.clearFaults();
    upstream.requests.length = 0;
    c.setup?.();
    const viaYoga = await send(yoga, c.body, c.headers);
    const yogaCalls = upstream.requests.map((r) => `${r.method} ${r.path} ${r.body}`);

    upstream.clearFaults();
    upstream.requests.length = 0;
    c.setup?.();
    const viaFast = await send(fast, c.body, c.headers);
    const fastCalls = upstream.requests.map((r) => `${r.method} ${r.path} ${r.body}`);

    expect(viaFast).toEqual(viaYoga);
    expect(fastCalls).toEqual(yogaCalls);
    expect(operationLines(fast.logs)).toEqual(operationLines(yoga.logs));
    expect(operationLines(fast.logs).length).toBeGreaterThan(0);
    expect(JSON.parse(viaYoga.text).errors?.[0]?.extensions?.code).toBe(c.code);
    // Successes are the fast lane's own; everything else is answered by Yoga.
    expect(lanes.served.fast - servedBefore).toBe(c.code === undefined && !c.yogaOnly ? 1 : 0);
  });

  it('counted every operation in the same metric series on both sides', async () => {
    const series = async (metrics: Metrics) =>
      (await metrics.registry.getMetricsAsJSON())
        .filter((metric) =>
          [
            'pet_gateway_operations_total',
            'pet_gateway_errors_total',
            'pet_gateway_deprecated_field_use_total',
          ].includes(metric.name),
        )
        .map((metric) => ({ name: metric.name, values: metric.values }));
    const httpCounts = async (metrics: Metrics) =>
      (await metrics.registry.getMetricsAsJSON())
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
    const fromFast = await series(fast.metrics);
    expect(
      fromFast.find((metric) => metric.name === 'pet_gateway_operations_total')?.values.length,
    ).toBeGreaterThan(3);
    expect(fromFast).toEqual(await series(yoga.metrics));
    expect(await httpCounts(fast.metrics)).toEqual(await httpCounts(yoga.metrics));
  });

  it('sends a new request id, as Yoga does, when the caller sends none', async () => {
    const body = { query: '{ pets(limit: 7) { id } }' };
    for (let run = 0; run < 3; run++) await send(fast, body);
    const before = fast.gateway.lanes?.served.fast ?? 0;
    const answer = await request(fast.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify(body),
    });
    await answer.body.text();
    expect(fast.gateway.lanes?.served.fast).toBe(before + 1);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('a rate limit holds in both lanes, one point per request', () => {
  let limitedYoga: Side;
  let limitedFast: Side;
  const limits = [createRateLimit({ perMinute: 5 }), createRateLimit({ perMinute: 5 })];

  beforeAll(async () => {
    limitedYoga = await side(false, limits[0]);
    limitedFast = await side(true, limits[1]);
  });

  afterAll(async () => {
    await limitedYoga.gateway.close();
    await limitedFast.gateway.close();
    for (const limit of limits) await limit.close();
  });

  it('answers the same 429, and counts a request the fast lane hands to Yoga once', async () => {
    const found = { query: 'query Limited($id: ID!) { pet(id: $id) { id name } }', variables: { id: '2' } };
    const missing = { ...found, variables: { id: '404' } };
    // The fourth is executed by the fast lane and answered by Yoga (it has an error): were it
    // counted by both, the fifth would be refused.
    const statuses: number[] = [];
    for (const body of [found, found, found, missing, found, found]) {
      const viaYoga = await send(limitedYoga, body);
      const viaFast = await send(limitedFast, body);
      // Both minutes opened within a millisecond of each other: Retry-After may round apart.
      const seconds = (answer: Answer) => Number(answer.headers['retry-after'] ?? 0);
      expect(Math.abs(seconds(viaFast) - seconds(viaYoga))).toBeLessThanOrEqual(1);
      const same = (answer: Answer) =>
        JSON.parse(JSON.stringify(answer).replaceAll(/(retry-after":"|retryAfter\\":|retry in )\d+/g, '$1N'));
      expect(same(viaFast)).toEqual(same(viaYoga));
      statuses.push(viaYoga.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(limits.map((limit) => limit.stats.limited)).toEqual([1, 1]);
    expect(limitedFast.gateway.lanes?.served.fast).toBeGreaterThan(0);
  });
});
