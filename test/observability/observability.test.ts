// @tier integration

import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { createTracing, type Tracing } from '../../src/observability/tracing.ts';
import { call, connectMcp } from '../mcp/client.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute, postJson } from '../support/graphql.ts';
import { ListPets, RepeatedPet } from '../support/operations.ts';

const TOKEN = 'observed-secret-token';
const AUTH = `Bearer ${TOKEN}`;
const BIG_ID = '9007199254740993';

let upstream: FakeUpstream;
let gateway: RunningGateway;
let tracing: Tracing;
let url: string;
let origin: string;
const lines: string[] = [];
const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  upstream.seed(TOKEN, { id: BIG_ID, name: 'Rex', categoryId: '1', status: 'available' });
  const metrics = createMetrics();
  tracing = createTracing({ exporter });
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  gateway = await startGateway({
    upstreamUrl: upstream.url,
    client: { retryBaseMs: 1, observers: [metrics.upstream, tracing.upstream] },
    gateway: { logger, metrics, tracing },
  });
  ({ url, origin } = gateway);
});

afterAll(async () => {
  await gateway.close();
  await tracing.shutdown();
  await upstream.close();
});

beforeEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
  lines.length = 0;
  exporter.reset();
});

describe('/metrics', () => {
  it('counts operations, errors by code, upstream calls by route template, retries and deprecated use', async () => {
    await execute(url, ListPets, {}, AUTH);
    await execute(url, ListPets, { limit: 0 }, AUTH);
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH, 'graphql-client-name': 'ios-app' },
      body: JSON.stringify({ query: `query One { pet(id: "${BIG_ID}") { id } }` }),
    });
    upstream.fault(
      /^\/v1\/pets\?/,
      (_req, res) => {
        res.writeHead(503);
        res.end();
      },
      1,
    );
    await execute(url, ListPets, { limit: 3 }, AUTH);

    const text = await (await fetch(`${origin}/metrics`)).text();
    expect(text).toMatch(
      /pet_gateway_operations_total\{operationName="ListPets",operationType="query"\} [1-9]/,
    );
    expect(text).toMatch(
      /pet_gateway_operation_duration_seconds_count\{operationName="ListPets",operationType="query"\} [1-9]/,
    );
    expect(text).toMatch(
      /pet_gateway_errors_total\{operationName="ListPets",code="BAD_USER_INPUT",phase="execute"\} 1/,
    );
    expect(text).toMatch(
      /pet_gateway_upstream_request_duration_seconds_count\{route="GET \/pets",status="200",outcome="ok"\} [1-9]/,
    );
    expect(text).toMatch(
      /pet_gateway_upstream_request_duration_seconds_count\{route="GET \/pets\/\{petId\}",status="200",outcome="ok"\} 1/,
    );
    expect(text).toMatch(
      /pet_gateway_upstream_request_duration_seconds_count\{route="GET \/pets",status="503",outcome="http_error"\} 1/,
    );
    expect(text).toMatch(/pet_gateway_upstream_retries_total\{route="GET \/pets",reason="overloaded"\} 1/);
    expect(text).toMatch(/pet_gateway_upstream_breaker_state 0/);
    expect(text).toMatch(/pet_gateway_deprecated_field_use_total\{field="Query.pet",client="ios-app"\} 1/);
    expect(text).toMatch(/pet_gateway_http_request_duration_seconds_count\{method="POST",statusCode="200"\}/);
    // No token, no id, no path with an id in any label.
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(BIG_ID);
  });

  it('bounds caller-chosen names: a flood of operation names ends in "other"', async () => {
    await Promise.all(
      Array.from({ length: 210 }, (_, i) => postJson(url, { query: `query Op${i} { __typename }` })),
    );
    const text = await (await fetch(`${origin}/metrics`)).text();
    const names = new Set(
      [...text.matchAll(/pet_gateway_operations_total\{operationName="([^"]+)"/g)].map((m) => m[1]),
    );
    expect(names.size).toBeLessThanOrEqual(201);
    expect(names.has('other')).toBe(true);
  });
});

describe('response cache metrics', () => {
  it('reads the store’s counters at scrape time', async () => {
    const metrics = createMetrics();
    const stats = { hits: 0, misses: 0, errors: 0 };
    metrics.watchCache(stats);
    stats.hits = 3;
    stats.misses = 2;
    stats.errors = 1;
    const text = await metrics.registry.metrics();
    expect(text).toContain('pet_gateway_response_cache_lookups_total{result="hit"} 3');
    expect(text).toContain('pet_gateway_response_cache_lookups_total{result="miss"} 2');
    expect(text).toContain('pet_gateway_response_cache_lookups_total{result="error"} 1');
  });
});

describe('JSON logs', () => {
  it('writes one line per operation with request id, name, duration, upstream calls and outcome, and no token', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH, 'x-request-id': 'req-42' },
      body: JSON.stringify({
        query: `query Twice { a: pet(id: "${BIG_ID}") { id } b: pet(id: "1") { id } }`,
      }),
    });
    expect(response.headers.get('x-request-id')).toBe('req-42');
    await execute(url, ListPets, { limit: 101 }, AUTH);
    const operations = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'operation');
    expect(operations).toHaveLength(2);
    expect(operations[0]).toMatchObject({
      requestId: 'req-42',
      operationName: 'Twice',
      operationType: 'query',
      upstreamCalls: 2,
      status: 200,
      outcome: 'error', // pet "1" does not exist
      codes: ['PET_NOT_FOUND'],
    });
    expect(operations[0].durationMs).toBeTypeOf('number');
    expect(operations[1]).toMatchObject({
      operationName: 'ListPets',
      upstreamCalls: 0,
      codes: ['BAD_USER_INPUT'],
    });
    expect(operations[1].requestId).toMatch(/^[0-9a-f-]{36}$/);
    const all = lines.join('\n');
    expect(all).not.toContain(TOKEN);
    expect(all.toLowerCase()).not.toContain('bearer');
  });

  it('refuses an unsafe x-request-id and makes its own', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'a b"c' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('OpenTelemetry', () => {
  it('makes a span per operation and per upstream call, and propagates traceparent upstream', async () => {
    // Run 1 is interpreted by graphql-js, run 2 compiled, runs 3 and 4 served by the fast lane:
    // spans nest the same every way.
    const fastBefore = gateway.lanes?.served.fast ?? 0;
    for (let run = 0; run < 4; run++) {
      exporter.reset();
      upstream.requests.length = 0;
      await execute(url, RepeatedPet, { one: BIG_ID, two: BIG_ID }, AUTH);
      const spans = exporter.getFinishedSpans();
      const operation = spans.find((span) => span.name === 'graphql.query RepeatedPet');
      const call = spans.find((span) => span.name === 'GET /pets/{petId}');
      expect(operation).toBeDefined();
      expect(call).toBeDefined();
      expect(call?.spanContext().traceId).toBe(operation?.spanContext().traceId);
      expect(call?.parentSpanContext?.spanId).toBe(operation?.spanContext().spanId);
      expect(upstream.requests[0]?.traceparent).toBe(
        `00-${call?.spanContext().traceId}-${call?.spanContext().spanId}-01`,
      );
      expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain(BIG_ID);
      expect(spans.filter((span) => span.name.startsWith('graphql.'))).toHaveLength(1);
    }
    expect(gateway.lanes?.served.fast).toBe(fastBefore + 2);
  });

  it('ends one failed span when a prepared operation fails in the fast lane and Yoga answers', async () => {
    const query = 'query Failing($id: ID!) { pet(id: $id) { id } }';
    for (let run = 0; run < 3; run++) {
      await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body: JSON.stringify({ query, variables: { id: BIG_ID } }),
      });
    }
    exporter.reset();
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify({ query, variables: { id: '404' } }),
    });
    const operations = exporter.getFinishedSpans().filter((span) => span.name === 'graphql.query Failing');
    expect(operations).toHaveLength(1);
    expect(operations[0]?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(operations[0]?.attributes['graphql.error.codes']).toEqual(['PET_NOT_FOUND']);
  });

  it('names the span after the operation that runs, in both lanes', async () => {
    const query = 'query First { pets(limit: 1) { id } } query Second { pets(limit: 2) { name } }';
    for (let run = 0; run < 4; run++) {
      exporter.reset();
      await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body: JSON.stringify({ query, operationName: 'Second' }),
      });
      const names = exporter.getFinishedSpans().map((span) => span.name);
      expect(names).toContain('graphql.query Second');
      expect(names).not.toContain('graphql.query First');
    }
  });

  it('continues the caller’s trace from its traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    // Through Yoga's lane, then (once prepared) the fast lane.
    for (let run = 0; run < 3; run++) {
      exporter.reset();
      await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: AUTH,
          traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        },
        body: JSON.stringify({ query: 'query L { pets(limit: 1) { id } }' }),
      });
      const spans = exporter.getFinishedSpans();
      expect(spans.map((span) => span.spanContext().traceId)).toEqual([traceId, traceId]);
    }
  });
});

describe('an MCP tool call', () => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const callerSpan = 'b7ad6b7169203331';

  it("has a span of its own: the caller's trace continues through it into the GraphQL operation and the upstream", async () => {
    const client = await connectMcp(origin, TOKEN, 'trace-assistant', {
      traceparent: `00-${traceId}-${callerSpan}-01`,
    });
    try {
      exporter.reset();
      const result = await call(client, 'list_pets', { limit: 1 });
      expect(result.isError).toBeFalsy();
      const spans = exporter.getFinishedSpans();
      const tool = spans.find((span) => span.name === 'mcp.tools/call list_pets');
      const operation = spans.find((span) => span.name.startsWith('graphql.query'));
      // Two upstream calls: /mcp checking a key it had not checked yet (in the caller's request,
      // before any tool call), then the tool's operation's own.
      const [check, upstreamCall] = spans.filter((span) => span.name === 'GET /pets');
      expect(check?.parentSpanContext?.spanId).toBe(callerSpan);
      expect(tool?.spanContext().traceId).toBe(traceId);
      expect(tool?.parentSpanContext?.spanId).toBe(callerSpan);
      expect(tool?.attributes).toEqual({ 'mcp.tool.name': 'list_pets' });
      expect(operation?.parentSpanContext?.spanId).toBe(tool?.spanContext().spanId);
      expect(upstreamCall?.parentSpanContext?.spanId).toBe(operation?.spanContext().spanId);
      expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([traceId]));
    } finally {
      await client.close();
    }
  });

  it('is marked failed with the codes its result carried, and never holds the arguments', async () => {
    const client = await connectMcp(origin, TOKEN);
    try {
      exporter.reset();
      // The upstream refuses the call: the tool result is an error with the upstream's code.
      upstream.fault(
        /^\/v1\/pets\?/,
        (_req, res) => {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ code: 'INVALID_QUERY', message: 'no', status: 400 }));
        },
        1,
      );
      const result = await call(client, 'list_pets', { limit: 77 });
      expect(result.isError).toBe(true);
      const tool = exporter.getFinishedSpans().find((span) => span.name === 'mcp.tools/call list_pets');
      expect(tool?.status.code).toBe(2); // SpanStatusCode.ERROR
      expect(tool?.attributes['mcp.error.codes']).toEqual(['INVALID_QUERY']);
      const attributes = JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes));
      expect(attributes).not.toContain('77');
      expect(attributes).not.toContain(TOKEN);
    } finally {
      await client.close();
    }
  });
});

describe('/readiness', () => {
  it('is 200 while the upstream answers, and 503 when it does not', async () => {
    expect((await fetch(`${origin}/readiness`)).status).toBe(200);
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    const dead = await startGateway({ upstreamUrl: 'http://127.0.0.1:1/v1', timeoutMs: 500 });
    try {
      expect((await fetch(`${dead.origin}/readiness`)).status).toBe(503);
      // Liveness stays independent of the upstream.
      expect((await fetch(`${dead.origin}/health`)).status).toBe(200);
    } finally {
      await dead.close();
    }
  });

  it('probes the upstream at most once per 1.5 s', async () => {
    upstream.requests.length = 0;
    await new Promise((resolve) => setTimeout(resolve, 1600));
    for (let i = 0; i < 5; i++) await fetch(`${origin}/readiness`);
    expect(upstream.requests.filter((r) => r.path === '/v1/pets?limit=1' && !r.authorization)).toHaveLength(
      1,
    );
  });
});
