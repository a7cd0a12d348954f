// @tier integration

import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { call, connectMcp, INITIALIZE, modernPost, rawPost, textOf } from './client.ts';

// The gateway's bounds on /mcp, as on /graphql: a key the upstream refuses, the rate limit, the
// Origin, introspection off, and requests no client should send.

const GOOD = 'bounds-good-key';
const LIST_TOOLS = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
const READ_SCHEMA = { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'graphql://schema' } };

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

interface RpcError {
  error?: { code?: number; message?: string; data?: { code?: string } };
}

describe('/mcp at the default settings: no rate limit, CORS_ORIGINS=*', () => {
  let gateway: RunningGateway;
  let upstream: FakeUpstream;
  useGateway({ tokens: [GOOD] }, (started) => ({ gateway, upstream } = started));

  it('checks a key with the upstream without a rate limit too, and remembers one it accepted', async () => {
    expect((await rawPost(gateway.origin, bearer('refused-here'), LIST_TOOLS)).status).toBe(401);
    for (let i = 0; i < 3; i++)
      expect((await rawPost(gateway.origin, bearer(GOOD), LIST_TOOLS)).status).toBe(200);
    expect(upstream.requests.map((sent) => sent.authorization)).toEqual([
      'Bearer refused-here',
      `Bearer ${GOOD}`,
    ]);
  });

  it('refuses any Origin 403 (`*` is for browsers calling /graphql), and serves a request without one', async () => {
    const evil = await rawPost(
      gateway.origin,
      { ...bearer(GOOD), origin: 'http://evil.example' },
      INITIALIZE,
    );
    expect(evil.status).toBe(403);
    expect(((await evil.json()) as RpcError).error?.message).toMatch(/CORS_ORIGINS/);
    expect((await rawPost(gateway.origin, bearer(GOOD), INITIALIZE)).status).toBe(200);
  });

  it('answers 503 with Retry-After, serving nothing, when the upstream cannot be asked about a new key', async () => {
    upstream.fault(/\/pets/, (_req, res) => void res.writeHead(503).end(), 10);
    const response = await rawPost(gateway.origin, bearer('unknown-yet'), LIST_TOOLS);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(((await response.json()) as RpcError).error?.message).toMatch(/could not be asked/);
  });
});

describe('requests no client should send', () => {
  const lines: Array<Record<string, unknown>> = [];
  let gateway: RunningGateway;
  useGateway(
    {
      tokens: [GOOD],
      gateway: {
        gateway: {
          logger: createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) }),
        },
      },
    },
    (started) => ({ gateway } = started),
  );
  const unusual = () => lines.filter((line) => (line.level as number) >= 40);

  it('answers an empty batch with JSON-RPC Invalid Request (-32600), as JSON-RPC 2.0 says', async () => {
    const response = await rawPost(gateway.origin, bearer(GOOD), []);
    expect(response.status).toBe(400);
    const body = (await response.json()) as RpcError & { id?: unknown };
    expect(body.error?.code).toBe(-32600);
    expect(body.id).toBeNull();
  });

  it('answers tools/call with `arguments: 5` Invalid params (-32602) naming `arguments`, no validator dump', async () => {
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_pets', arguments: 5 } };
    const response = await rawPost(gateway.origin, bearer(GOOD), call);
    const body = (await response.json()) as RpcError & { id?: unknown };
    expect(body.id).toBe(7);
    expect(body.error?.code).toBe(-32602);
    expect(body.error?.message).toBe('Invalid params: arguments: expected record, received number.');
  });

  it('writes one warn line without a stack for variables nested 25,000 deep, refused before they run', async () => {
    lines.length = 0;
    const deep = `${'['.repeat(25_000)}${']'.repeat(25_000)}`;
    const text = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"run_query","arguments":{"query":"query($v: [String]) { __typename }","variables":{"v":${deep}}}}}`;
    const response = await rawPost(gateway.origin, bearer(GOOD), text);
    expect(response.status).toBe(400);
    expect(((await response.json()) as RpcError).error?.code).toBe(-32600);
    expect(unusual()).toEqual([expect.objectContaining({ level: 40 })]);
    expect(JSON.stringify(lines)).not.toContain('stack');
  });

  it('writes one warn line without a stack for a client that leaves mid-body', async () => {
    lines.length = 0;
    const url = new URL('/mcp', gateway.origin);
    const req = request({
      host: url.hostname,
      port: url.port,
      path: '/mcp',
      method: 'POST',
      agent: false,
      headers: { ...bearer(GOOD), 'content-type': 'application/json', 'content-length': '1000' },
    });
    req.on('error', () => {});
    req.write('{"jsonrpc":"2.0","id":1,');
    await sleep(100);
    req.destroy();
    for (let i = 0; i < 50 && unusual().length === 0; i++) await sleep(20);
    await sleep(100);
    expect(unusual()).toEqual([expect.objectContaining({ level: 40 })]);
    expect(JSON.stringify(lines)).not.toContain('stack');
  });
});

describe('INTROSPECTION=off on /mcp', () => {
  let gateway: RunningGateway;
  useGateway(
    { tokens: [GOOD], gateway: { config: { introspection: false } } },
    (started) => ({ gateway } = started),
  );

  it('offers no schema resource, and no tool points to one', async () => {
    const client = await connectMcp(gateway.origin, GOOD);
    expect(client.getServerCapabilities()?.resources).toBeUndefined();
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) expect(tool.description, tool.name).not.toContain('graphql://schema');
    const introspection = await call(client, 'run_query', { query: '{ __schema { types { name } } }' });
    expect(introspection.isError).toBe(true);
    expect(textOf(introspection)).not.toContain('Pet');
    await client.close();
    const read = await rawPost(gateway.origin, bearer(GOOD), READ_SCHEMA);
    const body = (await read.json()) as RpcError & { result?: unknown };
    expect(body.result).toBeUndefined();
    expect(body.error?.code).toBe(-32601);
  });
});

describe('a key the upstream refuses, with RATE_LIMIT_PER_MINUTE=8', () => {
  let gateway: RunningGateway;
  let upstream: FakeUpstream;
  useGateway(
    {
      tokens: [GOOD, 'counted-key'],
      gateway: { config: { rateLimit: { perMinute: 8, store: 'memory', refusedKeysPerMinute: 60 } } },
    },
    (started) => ({ gateway, upstream } = started),
  );

  it('answers initialize, then refuses tools/list and resources/read 401 after one upstream check', async () => {
    const key = bearer('refused-once');
    expect((await rawPost(gateway.origin, key, INITIALIZE)).status).toBe(200);
    expect(upstream.requests).toHaveLength(0);
    for (const message of [LIST_TOOLS, READ_SCHEMA]) {
      const response = await rawPost(gateway.origin, key, message);
      expect(response.status, message.method).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
      const body = (await response.json()) as RpcError;
      expect(body.error?.message).toMatch(/refused this API key/);
    }
    expect(upstream.requests.map((sent) => `${sent.method} ${sent.path} ${sent.authorization}`)).toEqual([
      'GET /v1/pets?limit=1 Bearer refused-once',
      'GET /v1/pets?limit=1 Bearer refused-once',
    ]);
  });

  it('serves nothing beyond initialize to a refused key in a flood, and counts every request', async () => {
    const key = bearer('refused-flood');
    const messages = [INITIALIZE, LIST_TOOLS, READ_SCHEMA];
    const statuses: number[] = [];
    const served: string[] = [];
    for (let i = 0; i < 60; i++) {
      const message = messages[i % 3] as { method: string };
      const response = await rawPost(gateway.origin, key, message);
      statuses.push(response.status);
      if (response.status === 200 && message.method !== 'initialize') served.push(message.method);
    }
    expect(served).toEqual([]);
    // Eight requests this minute, whatever their method; the upstream checked the key at most that often.
    expect(statuses.filter((status) => status !== 429)).toHaveLength(8);
    expect(statuses.slice(8).every((status) => status === 429)).toBe(true);
    expect(upstream.requests.length).toBeLessThanOrEqual(8);
  });

  it('counts every JSON-RPC request of an accepted key: the ninth of the minute is 429 with Retry-After', async () => {
    const key = bearer('counted-key');
    const answers: Response[] = [];
    for (let i = 0; i < 12; i++)
      answers.push(await rawPost(gateway.origin, key, i % 2 ? LIST_TOOLS : INITIALIZE));
    expect(answers.map((answer) => answer.status)).toEqual([...Array(8).fill(200), ...Array(4).fill(429)]);
    const refused = answers[8] as Response;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await refused.json()) as RpcError;
    expect(body.error?.data?.code).toBe('RATE_LIMITED');
    // The key was checked once, then remembered.
    expect(upstream.requests).toHaveLength(1);
  });
});

/** A gateway of its own (the refused keys are counted per address, and every test comes from one). */
function useRefusedKeysGateway(): { gateway: RunningGateway; upstream: FakeUpstream } {
  const started = {} as { gateway: RunningGateway; upstream: FakeUpstream };
  useGateway(
    {
      tokens: [GOOD],
      gateway: { config: { rateLimit: { perMinute: 100, store: 'memory', refusedKeysPerMinute: 2 } } },
    },
    (running) => Object.assign(started, running),
  );
  return started;
}

describe('RATE_LIMIT_REFUSED_KEYS_PER_MINUTE=2 on /mcp', () => {
  const running = useRefusedKeysGateway();

  it('refuses a third new key from the address 429 REFUSED_KEYS_LIMITED, without asking the upstream', async () => {
    const statuses: number[] = [];
    for (const key of ['new-1', 'new-2', 'new-3']) {
      const response = await rawPost(running.gateway.origin, bearer(key), LIST_TOOLS);
      statuses.push(response.status);
      if (key === 'new-3')
        expect(((await response.json()) as RpcError).error?.data?.code).toBe('REFUSED_KEYS_LIMITED');
    }
    expect(statuses).toEqual([401, 401, 429]);
    expect(running.upstream.requests).toHaveLength(2);
  });
});

describe('RATE_LIMIT_REFUSED_KEYS_PER_MINUTE=2 on /mcp, for 2026-07-28 requests', () => {
  const running = useRefusedKeysGateway();

  it('refuses a third new key 429 without asking the upstream, each answer with its request id', async () => {
    const statuses: unknown[] = [];
    for (const key of ['modern-1', 'modern-2', 'modern-3']) {
      const response = await modernPost(running.gateway.origin, bearer(key), 'tools/list', {}, key);
      const body = (await response.json()) as RpcError & { id: unknown };
      statuses.push([response.status, body.id, body.error?.data?.code]);
    }
    expect(statuses).toEqual([
      [401, 'modern-1', 'UNAUTHENTICATED'],
      [401, 'modern-2', 'UNAUTHENTICATED'],
      [429, 'modern-3', 'REFUSED_KEYS_LIMITED'],
    ]);
    expect(running.upstream.requests).toHaveLength(2);
  });
});
