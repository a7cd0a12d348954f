// @tier integration

import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { connectMcp, INITIALIZE, rawPost } from './client.ts';

const KEY = 'http-key';

describe('/mcp at the HTTP level', () => {
  let gateway: RunningGateway;
  let upstream: FakeUpstream;
  useGateway(
    {
      tokens: [KEY],
      gateway: {
        config: { corsOrigins: ['https://app.example'] },
        limits: { ...DEFAULT_LIMITS, maxBodyBytes: 2048 },
      },
    },
    (started) => ({ gateway, upstream } = started),
  );

  it('answers 401 with WWW-Authenticate: Bearer and a sentence a person reads, without a key', async () => {
    const response = await rawPost(gateway.origin, {}, INITIALIZE);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    const body = await response.json();
    expect(body.error.message).toMatch(/Authorization: Bearer <API key>/);
    expect(upstream.requests).toHaveLength(0);
  });

  it('refuses an Origin outside CORS_ORIGINS with 403 (DNS rebinding), and serves a listed one', async () => {
    const evil = await rawPost(
      gateway.origin,
      { authorization: `Bearer ${KEY}`, origin: 'http://evil.example' },
      INITIALIZE,
    );
    expect(evil.status).toBe(403);
    expect((await evil.json()).error.message).toMatch(/origin/i);
    const client = await connectMcp(gateway.origin, KEY, 'web', { origin: 'https://app.example' });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it('refuses a body over MAX_BODY_BYTES with 413, as a JSON-RPC error', async () => {
    const big = { ...INITIALIZE, params: { ...INITIALIZE.params, padding: 'x'.repeat(4096) } };
    const response = await rawPost(gateway.origin, { authorization: `Bearer ${KEY}` }, big);
    expect(response.status).toBe(413);
    expect((await response.json()).error.code).toBeTypeOf('number');
  });

  it('refuses a body that is not declared JSON with 415, as /graphql does, before reading it', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const response = await rawPost(
        gateway.origin,
        { authorization: `Bearer ${KEY}`, 'content-type': type },
        INITIALIZE,
      );
      expect(response.status, type).toBe(415);
      expect((await response.json()).error.message).toMatch(/application\/json/);
    }
    const charset = await rawPost(
      gateway.origin,
      { authorization: `Bearer ${KEY}`, 'content-type': 'application/json; charset=utf-8' },
      INITIALIZE,
    );
    expect(charset.status).toBe(200);
  });

  it('answers a body that is not JSON with a JSON-RPC parse error, no stack', async () => {
    const response = await rawPost(gateway.origin, { authorization: `Bearer ${KEY}` }, '{"jsonrpc":');
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(JSON.parse(text).error.code).toBe(-32700);
    expect(text).not.toMatch(/at .*\.ts/);
  });

  it('answers GET and DELETE 405: stateless, no stream to open and no session to end', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(new URL('/mcp', gateway.origin), {
        method,
        headers: { authorization: `Bearer ${KEY}`, accept: 'text/event-stream' },
      });
      expect(response.status).toBe(405);
    }
  });
});

describe('MCP=off', () => {
  let gateway: RunningGateway;
  useGateway({ tokens: [KEY], gateway: { config: { mcp: false } } }, (started) => ({ gateway } = started));

  it('answers /mcp as any unknown path: 404', async () => {
    const response = await rawPost(gateway.origin, { authorization: `Bearer ${KEY}` }, INITIALIZE);
    expect(response.status).toBe(404);
  });
});
