import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { INITIALIZE, rawPost } from './client.ts';

// The gateway's bounds on /mcp, as on /graphql: a key the upstream refuses, the rate limit, the
// Origin, introspection off, and requests no client should send.

const GOOD = 'bounds-good-key';

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
  let gateway: RunningGateway;
  useGateway({ tokens: [GOOD] }, (started) => ({ gateway } = started));

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
});
