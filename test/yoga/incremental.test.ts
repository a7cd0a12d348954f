// @tier integration

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIG_ID, type FakeUpstream, MAX_INT64, seedPets } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';

// @defer and @stream, as Apollo's clients send them (multipart/mixed) and as urql and graphql-sse
// read them (SSE), chosen by Accept; a client that accepts neither gets the whole result at once.

const TOKEN = 'incremental-token';
const AUTH = `Bearer ${TOKEN}`;
const MULTIPART = 'multipart/mixed;deferSpec=20220824, application/json;q=0.9';
const SSE = 'text/event-stream';

let upstream: FakeUpstream;
let gateway: RunningGateway;
useGateway({ tokens: [TOKEN], seed: (u) => seedPets(u, TOKEN) }, (started) => {
  ({ upstream, gateway } = started);
});

type Part = {
  data?: Record<string, unknown> | null;
  incremental?: Array<{
    data?: Record<string, unknown>;
    items?: unknown[];
    path: Array<string | number>;
    errors?: Array<{ extensions?: { code?: string } }>;
  }>;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
  hasNext?: boolean;
};

async function post(body: unknown, accept: string) {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, authorization: AUTH },
    body: JSON.stringify(body),
  });
  return { response, text: await response.text() };
}

/** The JSON parts of a multipart/mixed body. */
function multipartParts(contentType: string, text: string): Part[] {
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1];
  if (!boundary) throw new Error(`no boundary in ${contentType}`);
  return text
    .split(`--${boundary}`)
    .map((chunk) => chunk.split('\r\n\r\n').slice(1).join('\r\n\r\n').trim())
    .filter((chunk) => chunk.startsWith('{'))
    .map((chunk) => JSON.parse(chunk) as Part);
}

/** The `next` events of an SSE body, and whether it ended with `complete`. */
function sseParts(text: string): { parts: Part[]; complete: boolean } {
  const events = text.split('\n\n').filter((block) => block.trim() !== '');
  const parts = events
    .filter((block) => block.startsWith('event: next'))
    .map(
      (block) =>
        JSON.parse(
          block
            .split('\n')
            .find((line) => line.startsWith('data: '))
            ?.slice(6) ?? 'null',
        ) as Part,
    );
  return { parts, complete: events.some((block) => block.startsWith('event: complete')) };
}

const DEFERRED = { query: '{ pets(limit: 2) { id ... @defer { name } } }' };

describe('@defer', () => {
  it('over multipart/mixed: the first part without the deferred field, the last with hasNext false', async () => {
    const { response, text } = await post(DEFERRED, MULTIPART);
    expect(response.status).toBe(200);
    const type = response.headers.get('content-type') ?? '';
    expect(type).toMatch(/^multipart\/mixed/);
    const parts = multipartParts(type, text);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(parts[0]?.data).toEqual({ pets: [{ id: BIG_ID }, { id: '2' }] });
    expect(parts[0]?.hasNext).toBe(true);
    expect(parts.at(-1)?.hasNext).toBe(false);
    const names = parts.flatMap((part) => part.incremental ?? []).map((item) => item.data?.name);
    expect(names.sort()).toEqual(['Rex', 'Tom']);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    expect(response.headers.get('content-encoding')).toBeNull();
  });

  it('over SSE: the same parts as events, then complete', async () => {
    const { response, text } = await post(DEFERRED, SSE);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { parts, complete } = sseParts(text);
    expect(parts[0]?.data).toEqual({ pets: [{ id: BIG_ID }, { id: '2' }] });
    expect(parts[0]?.hasNext).toBe(true);
    expect(parts.at(-1)?.hasNext).toBe(false);
    expect(complete).toBe(true);
  });

  it('to a client that accepts only JSON: the whole result in one answer, never an error', async () => {
    for (const accept of ['application/json', 'application/graphql-response+json', '*/*']) {
      const { response, text } = await post(DEFERRED, accept);
      expect(response.status, accept).toBe(200);
      expect(JSON.parse(text), accept).toEqual({
        data: {
          pets: [
            { id: BIG_ID, name: 'Rex' },
            { id: '2', name: 'Tom' },
          ],
        },
      });
    }
  });

  it('never in a form the client refused with q=0 (RFC 9110 §12.4.2): another it accepts, or 406', async () => {
    const merged = {
      data: {
        pets: [
          { id: BIG_ID, name: 'Rex' },
          { id: '2', name: 'Tom' },
        ],
      },
    };
    const sse = await post(DEFERRED, 'text/event-stream, multipart/mixed;q=0');
    expect(sse.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(sseParts(sse.text).parts[0]?.hasNext).toBe(true);
    const json = await post(DEFERRED, 'multipart/mixed; q=0, application/json');
    expect(json.response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(JSON.parse(json.text)).toEqual(merged);
    // Three times: once the operation is prepared, the fast lane answers with what Yoga sent.
    for (let i = 0; i < 3; i++) {
      const plain = await post(
        { query: '{ pets(limit: 1) { id } }' },
        'application/json;q=0, application/graphql-response+json',
      );
      expect(plain.response.headers.get('content-type')).toBe(
        'application/graphql-response+json; charset=utf-8',
      );
      expect(JSON.parse(plain.text)).toEqual({ data: { pets: [{ id: BIG_ID }] } });
    }
    upstream.requests.length = 0;
    for (const accept of ['multipart/mixed; q=0', 'multipart/mixed;q=0.0, text/event-stream;q=0']) {
      const refused = await post(DEFERRED, accept);
      expect(refused.response.status, accept).toBe(406);
      expect(refused.response.headers.get('content-type'), accept).toBe('application/json; charset=utf-8');
      expect(JSON.parse(refused.text).errors[0].extensions.code, accept).toBe('NOT_ACCEPTABLE');
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('brings an upstream failure inside a deferred fragment to that part, with the contract’s code', async () => {
    upstream.fault(/^\/v1\/pets\/2$/, (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"code":"UNAVAILABLE","message":"down","status":503}');
    });
    const { response, text } = await post(
      { query: '{ pets(limit: 1) { id } ... @defer { pet(id: "2") { name } } }' },
      MULTIPART,
    );
    const parts = multipartParts(response.headers.get('content-type') ?? '', text);
    expect(parts[0]?.data).toEqual({ pets: [{ id: BIG_ID }] });
    expect(parts[0]?.errors).toBeUndefined();
    const deferred = parts.flatMap((part) => part.incremental ?? []);
    // The upstream's own code passes through, as it does for a field outside @defer.
    expect(deferred[0]?.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
  });

  it('counts deferred selections in the cost: over MAX_COST is refused before anything runs', async () => {
    const { response, text } = await post(
      {
        // 1,103 with the deferred fields counted, 503 without them.
        query:
          '{ pets(limit: 100) { id ... @defer { name categoryId status } } a: pets(limit: 100) { id ... @defer { name categoryId status } } b: pets(limit: 100) { id name categoryId } }',
      },
      MULTIPART,
    );
    expect(response.status).toBe(400);
    expect(text).toContain('COST_LIMIT_EXCEEDED');
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('@stream', () => {
  it('on pets with initialCount 1: one pet first, the rest as items, ids exact past 2^53', async () => {
    const { response, text } = await post(
      { query: '{ pets(limit: 3) @stream(initialCount: 1) { id categoryId } }' },
      MULTIPART,
    );
    const parts = multipartParts(response.headers.get('content-type') ?? '', text);
    expect(parts[0]?.data).toEqual({ pets: [{ id: BIG_ID, categoryId: MAX_INT64 }] });
    const items = parts.flatMap((part) => part.incremental ?? []).flatMap((item) => item.items ?? []);
    expect(items).toEqual([
      { id: '2', categoryId: '1' },
      { id: '3', categoryId: '1' },
    ]);
    expect(text).toContain(`"id":"${BIG_ID}"`);
    expect(parts.at(-1)?.hasNext).toBe(false);
  });

  it('to a client that accepts only JSON: the whole list at once', async () => {
    const { text } = await post(
      { query: '{ pets(limit: 3) @stream(initialCount: 1) { id } }' },
      'application/json',
    );
    expect(JSON.parse(text)).toEqual({ data: { pets: [{ id: BIG_ID }, { id: '2' }, { id: '3' }] } });
  });
});

describe('@stream with a negative initialCount', () => {
  // Refused as the client's input, with the status Yoga gives the same class of error under the
  // same Accept: a validation error for a literal, a variable's coercion error for a variable.
  const cases = [
    {
      how: 'written in the document',
      body: { query: '{ pets(limit: 3) @stream(initialCount: -1) { id } }' },
      like: { query: '{ pets(limit: 3) { nope } }' },
    },
    {
      how: 'given as a variable',
      body: {
        query: 'query S($n: Int!) { pets(limit: 3) @stream(initialCount: $n) { id } }',
        variables: { n: -2 },
      },
      like: { query: 'query S($n: Int!) { pets(limit: $n) { id } }', variables: { n: 'two' } },
    },
    {
      how: 'left to the variable’s default',
      body: { query: 'query S($n: Int = -1) { pets(limit: 3) @stream(initialCount: $n) { id } }' },
      like: { query: 'query S($n: Int!) { pets(limit: $n) { id } }', variables: { n: 'two' } },
    },
  ];
  for (const { how, body, like } of cases) {
    it(`${how}: BAD_USER_INPUT, never an internal error, before any upstream call, under any Accept`, async () => {
      for (const accept of ['application/graphql-response+json', 'application/json', MULTIPART, SSE]) {
        upstream.requests.length = 0;
        const { response, text } = await post(body, accept);
        const answer = accept === SSE ? sseParts(text).parts[0] : (JSON.parse(text) as Part);
        expect(answer?.errors?.[0]?.extensions?.code, `${accept}: ${text}`).toBe('BAD_USER_INPUT');
        expect(answer?.errors?.[0]?.message).toMatch(/initialCount must be 0 or more/);
        expect(upstream.requests).toHaveLength(0);
        expect(response.status, accept).toBe((await post(like, accept)).response.status);
      }
    });
  }
});

describe('the schema', () => {
  it('declares @defer and @stream, so codegen and editors know them', () => {
    const sdl = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(sdl).toMatch(/^directive @defer\(/m);
    expect(sdl).toMatch(/^directive @stream\(/m);
  });
});
