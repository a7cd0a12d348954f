// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';

// @defer and @stream under the rules a plain request obeys: one deadline for every part, a
// deferred part that never holds the first one back, and every argument of the directives checked
// before anything runs.

const TOKEN = 'incremental-rules';
const AUTH = `Bearer ${TOKEN}`;
const MULTIPART = 'multipart/mixed;deferSpec=20220824, application/json;q=0.9';
const DEADLINE_MS = 1500;

let upstream: FakeUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '1' });
  upstream.seed(TOKEN, { id: '2', name: 'Tom', categoryId: '1' });
  gateway = await startGateway({ upstreamUrl: upstream.url, timeoutMs: DEADLINE_MS });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

interface Part {
  data?: unknown;
  incremental?: Array<{
    data?: unknown;
    path: unknown[];
    errors?: Array<{ extensions?: { code?: string } }>;
  }>;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
  hasNext?: boolean;
}

/** Posts with Accept multipart/mixed; each JSON part with when it arrived (ms after the request). */
async function parts(
  body: unknown,
): Promise<{ status: number; headersAt: number; parts: Array<Part & { at: number }> }> {
  const started = performance.now();
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: MULTIPART, authorization: AUTH },
    body: JSON.stringify(body),
  });
  const headersAt = performance.now() - started;
  const found: Array<Part & { at: number }> = [];
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
    text += decoder.decode(read.value, { stream: true });
    for (let start = text.indexOf('\r\n\r\n{'); start !== -1; start = text.indexOf('\r\n\r\n{')) {
      const end = text.indexOf('\r\n--', start);
      if (end === -1) break;
      found.push({ ...(JSON.parse(text.slice(start + 4, end)) as Part), at: performance.now() - started });
      text = text.slice(end);
    }
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('multipart/mixed')) {
    found.push({ ...(JSON.parse(text) as Part), at: performance.now() - started });
  }
  return { status: response.status, headersAt, parts: found };
}

/** A list call for `limit` whose answer starts at once and then drips for `ms`. */
function drip(limit: number, ms: number) {
  upstream.fault(new RegExp(`^/v1/pets\\?.*limit=${limit}\\b`), (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('[');
    const timer = setInterval(() => res.write(' '), 100);
    setTimeout(() => {
      clearInterval(timer);
      res.end('{"id":1,"name":"Late","categoryId":1}]');
    }, ms);
    res.on('close', () => clearInterval(timer));
  });
}

describe('one deadline for every part', () => {
  it('a deferred call past UPSTREAM_TIMEOUT_MS ends with UPSTREAM_TIMEOUT on its path, at the deadline', async () => {
    drip(2, 6000);
    try {
      const { parts: answer } = await parts({
        query: '{ a: pets(limit: 1) { name } ... @defer { b: pets(limit: 2) { name } } }',
      });
      expect(answer[0]?.data).toEqual({ a: [{ name: 'Rex' }] });
      const last = answer.at(-1);
      expect(last?.hasNext).toBe(false);
      expect(last?.incremental?.[0]?.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TIMEOUT');
      expect(last?.at).toBeLessThan(DEADLINE_MS + 1000);
    } finally {
      upstream.clearFaults();
    }
  });
});

describe('a deferred fragment', () => {
  it('never holds back the first part: it comes as soon as its own calls are answered', async () => {
    upstream.fault(/^\/v1\/pets\?.*limit=2\b/, (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[{"id":1,"name":"Slow","categoryId":1}]');
      }, 1000);
    });
    try {
      const { headersAt, parts: answer } = await parts({
        query: '{ a: pets(limit: 1) { name } ... @defer { b: pets(limit: 2) { name } } }',
      });
      expect(headersAt).toBeLessThan(500);
      expect(answer[0]?.at).toBeLessThan(500);
      expect(answer[0]?.data).toEqual({ a: [{ name: 'Rex' }] });
      expect(answer.at(-1)?.incremental?.[0]?.data).toEqual({ b: [{ name: 'Slow' }] });
    } finally {
      upstream.clearFaults();
    }
  });
});

describe('lists that fail', () => {
  it('are told in field order, whichever the upstream answered first (the first field’s error nulls the data)', async () => {
    const fail = (limit: number, ms: number) =>
      upstream.fault(new RegExp(`^/v1/pets\\?.*limit=${limit}\\b`), (_req, res) => {
        setTimeout(() => {
          res.writeHead(422, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ code: `SLOW_${limit}`, message: 'refused', status: 422 }));
        }, ms);
      });
    fail(3, 300);
    fail(4, 0);
    try {
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body: JSON.stringify({ query: '{ a: pets(limit: 3) { name } b: pets(limit: 4) { name } }' }),
      });
      const body = (await response.json()) as {
        errors: Array<{ path: string[]; extensions: { code: string } }>;
      };
      // Both are non-null: the first error nulls the data, and it is the first field's.
      expect(body.errors.map((error) => [error.path[0], error.extensions.code])).toEqual([['a', 'SLOW_3']]);
    } finally {
      upstream.clearFaults();
    }
  });
});

describe('@stream(initialCount: null)', () => {
  const cases: Array<[string, { query: string; variables?: Record<string, unknown> }]> = [
    ['as a literal', { query: '{ pets(limit: 2) @stream(initialCount: null) { name } }' }],
    [
      'as a variable',
      {
        query: 'query Q($n: Int) { pets(limit: 2) @stream(initialCount: $n) { name } }',
        variables: { n: null },
      },
    ],
    [
      'as null over a default',
      {
        query: 'query Q($n: Int = 1) { pets(limit: 2) @stream(initialCount: $n) { name } }',
        variables: { n: null },
      },
    ],
  ];
  for (const [how, body] of cases) {
    it(`${how}: BAD_USER_INPUT naming initialCount, before any upstream call`, async () => {
      const before = upstream.requests.length;
      const { status, parts: answer } = await parts(body);
      const errors = answer.flatMap((part) => part.errors ?? []);
      expect(errors.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
      expect(errors[0]?.message).toMatch(/initialCount/);
      // Written as a literal it fails validation, with validation's status; else 400.
      const validation = (await parts({ query: '{ pets(limit: 2) { nope } }' })).status;
      expect(status).toBe(how === 'as a literal' ? validation : 400);
      expect(upstream.requests.length).toBe(before);
    });
  }
});
