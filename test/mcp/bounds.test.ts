import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { connectMcp, INITIALIZE, rawPost } from './client.ts';

// The gateway's bounds on /mcp, as on /graphql: a key the upstream refuses, the rate limit, the
// Origin, introspection off, and requests no client should send.

const GOOD = 'bounds-good-key';
const READ_SCHEMA = { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'graphql://schema' } };

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

interface RpcError {
  error?: { code?: number; message?: string; data?: { code?: string } };
}

describe('/mcp at the default settings: no rate limit, CORS_ORIGINS=*', () => {
  let gateway: RunningGateway;
  useGateway({ tokens: [GOOD] }, (started) => ({ gateway } = started));

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
    expect(body.error?.message).toMatch(/\barguments\b/);
    expect(body.error?.message).not.toMatch(/invalid_type|"path"|\n/);
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
    await client.close();
    const read = await rawPost(gateway.origin, bearer(GOOD), READ_SCHEMA);
    const body = (await read.json()) as RpcError & { result?: unknown };
    expect(body.result).toBeUndefined();
    expect(body.error?.code).toBe(-32601);
  });
});
