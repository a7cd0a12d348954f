// @tier integration

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { FakeUpstream, Fault } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { CreatePet, GetPet, ListPets } from '../support/operations.ts';

const SECRET = 'secret-token-do-not-leak';
const AUTH = `Bearer ${SECRET}`;
const TIMEOUT_MS = 400;

let upstream: FakeUpstream;
let gateway: RunningGateway;

useGateway(
  {
    tokens: [SECRET],
    gateway: {
      timeoutMs: TIMEOUT_MS,
      // The breaker is tested on its own (resilience.test.ts): here every fault must reach the mapping.
      client: { breaker: { failureThreshold: 1_000_000, openMs: 1 } },
    },
  },
  (started) => {
    ({ upstream, gateway } = started);
  },
);

const reply =
  (status: number, body: string, headers: Record<string, string> = {}): Fault =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };

/** Whatever went wrong, the client never sees where the upstream is, what it said raw, or the token. */
function expectNoLeak(text: string): void {
  const port = new URL(upstream.url).port;
  expect(text).not.toContain(port);
  expect(text).not.toContain('127.0.0.1');
  expect(text).not.toContain(SECRET);
  expect(text).not.toMatch(/stack|at \w+ \(|node:internal|undici/i);
}

describe("answers the client reads as the contract's", () => {
  it("a body in many chunks with a leading byte order mark, as fetch and undici's text() read it", async () => {
    upstream.fault(/^\/v1\/pets/, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const body = Buffer.from('\uFEFF[{"id":7,"name":"Tüpfel","categoryId":3,"status":"sold"}]');
      // Split inside the BOM and inside the two-byte ü: the text is decoded once, from all the bytes.
      const cuts = [0, 1, 2, 22, body.length];
      let i = 0;
      const next = () => {
        const from = cuts[i] as number;
        const to = cuts[++i];
        if (to === undefined) return res.end();
        res.write(body.subarray(from, to));
        setTimeout(next, 5);
      };
      next();
    });
    const result = await execute(gateway.url, ListPets, {}, AUTH);
    expect(result.errors).toBeUndefined();
    expect(result.data?.pets).toEqual([{ id: '7', name: 'Tüpfel', categoryId: '3', status: 'SOLD' }]);
  });
});

describe('upstream failures map to one documented code each', () => {
  it.each<[string, Fault, Record<string, unknown>, string?]>([
    [
      '500 with an Error body passes code, status and message through',
      reply(500, '{"code":"DB_DOWN","message":"Database is down.","status":500}'),
      { code: 'DB_DOWN', status: 500 },
      'Database is down.',
    ],
    [
      '500 without an Error body',
      reply(500, '<html>oops</html>', { 'content-type': 'text/html' }),
      { code: 'UPSTREAM_BAD_RESPONSE' },
    ],
    ['502 without an Error body', reply(502, ''), { code: 'UPSTREAM_UNAVAILABLE' }],
    ['503 without an Error body', reply(503, 'busy'), { code: 'UPSTREAM_UNAVAILABLE' }],
    ['504 without an Error body', reply(504, '{}'), { code: 'UPSTREAM_UNAVAILABLE' }],
    [
      '503 with an Error body keeps the upstream code',
      reply(503, '{"code":"MAINTENANCE","message":"Back soon.","status":503}'),
      { code: 'MAINTENANCE', status: 503 },
    ],
    [
      '429 with Retry-After in seconds',
      reply(429, '{"code":"RATE_LIMITED","message":"Slow down.","status":429}', { 'retry-after': '7' }),
      { code: 'RATE_LIMITED', status: 429, retryAfter: 7 },
    ],
    ['429 without Retry-After', reply(429, ''), { code: 'UPSTREAM_RATE_LIMITED', status: 429 }],
    [
      '403 with an Error body',
      reply(403, '{"code":"FORBIDDEN","message":"Not yours.","status":403}'),
      { code: 'FORBIDDEN', status: 403 },
    ],
    ['200 with malformed JSON', reply(200, '[{"id":1,'), { code: 'UPSTREAM_BAD_RESPONSE' }],
    [
      '200 with HTML',
      reply(200, '<!doctype html><p>hi</p>', { 'content-type': 'text/html' }),
      { code: 'UPSTREAM_BAD_RESPONSE' },
    ],
    ['200 with JSON of the wrong shape', reply(200, '{"pets":[]}'), { code: 'UPSTREAM_BAD_RESPONSE' }],
    [
      '200 with a string id',
      reply(200, '[{"id":"1","name":"a","categoryId":1}]'),
      { code: 'UPSTREAM_BAD_RESPONSE' },
    ],
    [
      '200 with a fractional id',
      reply(200, '[{"id":1.5,"name":"a","categoryId":1}]'),
      { code: 'UPSTREAM_BAD_RESPONSE' },
    ],
    [
      '200 with an unknown status',
      reply(200, '[{"id":1,"name":"a","categoryId":1,"status":"lost"}]'),
      { code: 'UPSTREAM_BAD_RESPONSE' },
    ],
    [
      'a body over the 1 MB cap',
      reply(
        200,
        `[${'{"id":1,"name":"a","categoryId":1},'.repeat(40_000)}{"id":1,"name":"a","categoryId":1}]`,
      ),
      { code: 'UPSTREAM_BAD_RESPONSE' },
    ],
    [
      'reset before headers',
      (req) => {
        req.socket.destroy();
      },
      { code: 'UPSTREAM_UNAVAILABLE' },
    ],
    [
      'reset mid-body',
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[{"id":1,"name":"a",');
        setTimeout(() => res.socket?.destroy(), 20);
      },
      { code: 'UPSTREAM_UNAVAILABLE' },
    ],
    [
      'truncated body (Content-Length promises more than arrives)',
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        res.write('[{"id":1,"name":"a","categoryId":1}');
        setTimeout(() => res.socket?.end(), 20);
      },
      { code: 'UPSTREAM_UNAVAILABLE' },
    ],
    [
      '401 with an Error body',
      reply(401, '{"code":"UNAUTHORIZED","message":"Bad key.","status":401}'),
      { code: 'UNAUTHORIZED', status: 401 },
    ],
    [
      // #64 row 10: the upstream's code is passed on verbatim, but only one that reads as a code.
      '400 whose Error body has a 200 kB code (not a code: the answer is outside the contract)',
      reply(400, JSON.stringify({ code: 'X'.repeat(200_000), message: 'Bad.', status: 400 })),
      { code: 'UPSTREAM_BAD_RESPONSE' },
    ],
    [
      '400 whose Error body code is a sentence',
      reply(400, '{"code":"not a code <b>at all</b>","message":"Bad.","status":400}'),
      { code: 'UPSTREAM_BAD_RESPONSE' },
    ],
    [
      '404 on the list route (not the contract: an Error body still passes through)',
      reply(404, '{"code":"NOT_FOUND","message":"No such route.","status":404}'),
      { code: 'NOT_FOUND', status: 404 },
    ],
    [
      'no headers ever',
      () => {
        /* never answers */
      },
      { code: 'UPSTREAM_TIMEOUT' },
    ],
    [
      'slow drip past the deadline',
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[');
        const timer = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(timer));
      },
      { code: 'UPSTREAM_TIMEOUT' },
    ],
  ])('%s', async (_name, fault, extensions, message) => {
    upstream.fault(/^\/v1\/pets/, fault);
    const started = performance.now();
    const result = await execute(gateway.url, ListPets, {}, AUTH);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1000);
    expect(result.status).toBe(200);
    expect(result.data).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors?.[0]?.extensions).toEqual(extensions);
    if (message) expect(result.errors?.[0]?.message).toBe(message);
    expectNoLeak(result.text);
  });

  it('429 with Retry-After as an HTTP date, no Error body: retryAfter in seconds from now', async () => {
    upstream.fault(
      /^\/v1\/pets/,
      reply(429, '', { 'retry-after': new Date(Date.now() + 30_000).toUTCString() }),
    );
    const result = await execute(gateway.url, ListPets, {}, AUTH);
    const extensions = result.errors?.[0]?.extensions ?? {};
    expect(extensions).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', status: 429 });
    // HTTP dates have whole-second precision, so 30 s ahead reads as 29 or 30.
    expect(extensions.retryAfter).toBeGreaterThanOrEqual(29);
    expect(extensions.retryAfter).toBeLessThanOrEqual(30);
  });

  it('connection refused is UPSTREAM_UNAVAILABLE', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const dead = await startGateway({ upstreamUrl: `http://127.0.0.1:${port}/v1` });
    try {
      const result = await execute(dead.url, ListPets, {}, AUTH);
      expect(result.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
      expect(result.text).not.toContain(String(port));
    } finally {
      await dead.close();
    }
  });

  it('never follows a redirect, so the token never reaches another origin', async () => {
    const elsewhere: string[] = [];
    const other = createServer((req, res) => {
      elsewhere.push(req.headers.authorization ?? '');
      res.end('[]');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/v1/pets`;
    try {
      upstream.fault(/^\/v1\/pets/, reply(302, '', { location: otherUrl }));
      const list = await execute(gateway.url, ListPets, {}, AUTH);
      const one = await execute(gateway.url, GetPet, { id: '1' }, AUTH);
      expect(list.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_BAD_RESPONSE' });
      expect(one.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_BAD_RESPONSE' });
      expect(elsewhere).toEqual([]);
      expectNoLeak(list.text);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('a failing createPet is sent exactly once', async () => {
    upstream.fault(/^\/v1\/pets/, reply(503, ''));
    const result = await execute(gateway.url, CreatePet, { input: { name: 'Once', categoryId: '1' } }, AUTH);
    expect(result.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(upstream.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('bounds a long upstream message', async () => {
    upstream.fault(
      /^\/v1\/pets/,
      reply(400, JSON.stringify({ code: 'X', message: 'y'.repeat(5000), status: 400 })),
    );
    const result = await execute(gateway.url, ListPets, {}, AUTH);
    expect(result.errors?.[0]?.message).toHaveLength(500);
  });
});
