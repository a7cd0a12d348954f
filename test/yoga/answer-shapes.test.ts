// @tier integration

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';

// One shape per answer, whatever door it comes through: the headers of an answer in parts as the
// specifications define them, one status per kind of error whatever the transport, a batch always
// one JSON array, and a form given q=0 never chosen.

const TOKEN = 'answer-shapes';
let upstream: FakeUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '1' });
  gateway = await startGateway({ upstreamUrl: upstream.url });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

/** A POST as the wire carries it: the status, every header line as sent, and the body. */
function post(body: unknown, accept: string): Promise<{ status: number; raw: string[]; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      gateway.url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${TOKEN}` },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, raw: res.rawHeaders, text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const named = (raw: string[], name: string) =>
  raw.filter((_, i) => i % 2 === 1 && raw[i - 1]?.toLowerCase() === name);

describe('an answer in parts', () => {
  it('over SSE carries one Cache-Control and no Content-Encoding: none', async () => {
    const { raw, text } = await post({ query: '{ pets(limit: 1) { name } }' }, 'text/event-stream');
    expect(named(raw, 'cache-control')).toEqual(['no-store']);
    expect(named(raw, 'content-encoding')).toEqual([]);
    expect(named(raw, 'x-accel-buffering')).toEqual(['no']);
    expect(text).toContain('event: next\ndata: {"data":{"pets":[{"name":"Rex"}]}}');
  });
});

describe('a subscription that does not validate', () => {
  const body = { query: 'subscription { pets(limit: 1) { nope } }' };
  it('is 400 over SSE, multipart and application/graphql-response+json alike; 200 only in legacy JSON', async () => {
    const statuses: Record<string, number> = {};
    for (const accept of [
      'text/event-stream',
      'multipart/mixed',
      'application/graphql-response+json',
      'application/json',
    ]) {
      const answer = await post(body, accept);
      statuses[accept] = answer.status;
      expect(answer.text).toContain('GRAPHQL_VALIDATION_FAILED');
    }
    expect(statuses).toEqual({
      'text/event-stream': 400,
      'multipart/mixed': 400,
      'application/graphql-response+json': 400,
      'application/json': 200,
    });
  });
});

describe('a subscription that does not validate, over graphql-ws', () => {
  it('comes back as its errors, as over SSE, and the socket stays open', async () => {
    const ws = new WebSocket(gateway.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const messages: Array<{ id?: string; type: string; payload?: unknown }> = [];
    ws.on('message', (data) => messages.push(JSON.parse(String(data))));
    await new Promise((resolve) => ws.once('open', resolve));
    try {
      ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${TOKEN}` } }));
      for (let i = 0; i < 100 && !messages.some((m) => m.type === 'connection_ack'); i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      ws.send(
        JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { pets { nope } }' } }),
      );
      for (let i = 0; i < 100 && !messages.some((m) => m.type === 'complete'); i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const next = messages.find((m) => m.type === 'next') as {
        payload: { errors: Array<{ extensions: { code: string } }> };
      };
      expect(next.payload.errors[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(ws.readyState).toBe(WebSocket.OPEN);
    } finally {
      ws.terminate();
    }
  });
});

describe('a batch', () => {
  for (const accept of ['multipart/mixed, application/json', 'text/event-stream, application/json']) {
    it(`is one JSON array under Accept: ${accept}, its @defer entry merged`, async () => {
      const { status, raw, text } = await post(
        [
          { query: '{ a: pets(limit: 1) { name } ... @defer { b: pets(limit: 1) { id } } }' },
          { query: '{ pets(limit: 1) { name } }' },
        ],
        accept,
      );
      expect(status).toBe(200);
      expect(named(raw, 'content-type')).toEqual(['application/json; charset=utf-8']);
      expect(JSON.parse(text)).toEqual([
        { data: { a: [{ name: 'Rex' }], b: [{ id: '1' }] } },
        { data: { pets: [{ name: 'Rex' }] } },
      ]);
    });
  }

  it('answers an @defer entry refused for its cost with data: null, as a plain request', async () => {
    const big = 'pets(limit: 100) { id name categoryId status }';
    const { text } = await post(
      [{ query: `{ a: ${big} ... @defer { b: ${big} c: ${big} } }` }],
      'application/json',
    );
    const [entry] = JSON.parse(text) as Array<{
      data?: unknown;
      errors?: Array<{ extensions?: { code?: string } }>;
    }>;
    expect(entry?.data).toBeNull();
    expect(entry?.errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
  });
});

describe('a form given q=0', () => {
  it('is never chosen: JSON refused, multipart admitted, a query without @defer comes in one part', async () => {
    const { status, raw, text } = await post(
      { query: '{ pets(limit: 1) { name } }' },
      'application/json;q=0, multipart/mixed',
    );
    expect(status).toBe(200);
    expect(named(raw, 'content-type')).toEqual(['multipart/mixed; boundary="-"']);
    const json = '{"data":{"pets":[{"name":"Rex"}]}}';
    expect(text).toBe(
      `\r\n---\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${json.length}\r\n\r\n${json}\r\n-----\r\n`,
    );
  });
});
