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
