// @tier integration

import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.ts';
import { createYogaServer } from '../../src/yoga/server.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';

// GRAPHIQL, INTROSPECTION and CORS_ORIGINS: defaults, and each switched on its own.
let upstream: FakeUpstream;
let client: UpstreamClient;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add('t');
  client = createUpstreamClient({ baseUrl: new URL(upstream.url), timeoutMs: 1000, connections: 2 });
});

afterAll(async () => {
  await client.close();
  await upstream.close();
});

const quiet = () => createLogger('silent');

async function page(gateway: ReturnType<typeof createYogaServer>) {
  const response = await gateway.fetch('http://gateway/graphql', { headers: { accept: 'text/html' } });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

async function introspect(gateway: ReturnType<typeof createYogaServer>) {
  const response = await gateway.fetch('http://gateway/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  return { status: response.status, body: await response.json() };
}

describe('GRAPHIQL and INTROSPECTION', () => {
  it('the prefilled key only at localhost or an IP address: any other name may be rebound by its DNS', async () => {
    const gateway = createYogaServer({
      upstream: client,
      logger: quiet(),
      graphiqlAuthorization: 'Bearer dev-k',
    });
    const at = async (host: string) =>
      (await gateway.fetch(`http://${host}/graphql`, { headers: { accept: 'text/html' } })).text();
    for (const host of ['localhost:4000', 'app.localhost', '127.0.0.1:4000', '[::1]:4000', '192.0.2.2']) {
      expect((await at(host)).includes('Bearer dev-k'), host).toBe(true);
    }
    for (const host of ['rebind.example:4000', 'localhost.example', '127.0.0.1.nip.io']) {
      const html = await at(host);
      expect(html.includes('Bearer dev-k'), host).toBe(false);
      expect(html.includes('Bearer <your API key>'), host).toBe(true);
    }
  });

  it('both on by default: the page is GraphiQL with the example, and introspection answers', async () => {
    const gateway = createYogaServer({ upstream: client, logger: quiet() });
    const html = await page(gateway);
    expect(html.type).toContain('text/html');
    expect(html.text).toContain('AvailablePets');
    expect(html.text).toContain('Bearer <your API key>');
    const schema = await introspect(gateway);
    expect(schema.body.data.__schema.queryType.name).toBe('Query');
  });

  it('GRAPHIQL off: a browser gets no GraphiQL page, GraphQL still works', async () => {
    const gateway = createYogaServer({ upstream: client, logger: quiet(), graphiql: false });
    const html = await page(gateway);
    expect(html.text).not.toContain('AvailablePets');
    expect(html.type ?? '').not.toContain('text/html');
    expect((await introspect(gateway)).body.data.__schema.queryType.name).toBe('Query');
  });

  it('GRAPHIQL off: a browser opening /graphql reads a 406 saying how to turn GraphiQL on', async () => {
    const gateway = createYogaServer({ upstream: client, logger: quiet(), graphiql: false });
    // What Chromium sends when a person types the URL.
    const accept =
      'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';
    for (const url of ['http://gateway/graphql', 'http://gateway/graphql?query=%7B__typename%7D']) {
      const response = await gateway.fetch(url, { headers: { accept } });
      expect(response.status, url).toBe(406);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await response.text()).toMatch(
        /^GraphiQL is off on this gateway \(GRAPHIQL=off\)\. .*GRAPHIQL=on/,
      );
    }
    const required = createYogaServer({
      upstream: client,
      logger: quiet(),
      persistedOperations: { mode: 'require', documents: new Map() },
    });
    const refused = await required.fetch('http://gateway/graphql', { headers: { accept } });
    expect(refused.status).toBe(406);
    expect(await refused.text()).toMatch(/PERSISTED_OPERATIONS=require.*PERSISTED_OPERATIONS=allow or off/);
  });

  it('INTROSPECTION off: __schema and __type are refused, ordinary queries still run', async () => {
    const gateway = createYogaServer({ upstream: client, logger: quiet(), introspection: false });
    const schema = await introspect(gateway);
    expect(schema.status).toBe(400);
    expect(schema.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(schema.body.errors[0].message).toMatch(/introspection/i);
    const response = await gateway.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
      body: JSON.stringify({ query: '{ pets(limit: 1) { id } }' }),
    });
    expect((await response.json()).data).toEqual({ pets: [] });
  });
});

describe('CORS', () => {
  async function preflight(gateway: ReturnType<typeof createYogaServer>, origin: string) {
    const response = await gateway.fetch('http://gateway/graphql', {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,authorization',
      },
    });
    return response.headers;
  }

  it('by default lets any origin call with a bearer header, never with credentials', async () => {
    const headers = await preflight(
      createYogaServer({ upstream: client, logger: quiet() }),
      'https://app.example',
    );
    expect(headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(headers.get('access-control-allow-headers')).toContain('authorization');
    expect(headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('with CORS_ORIGINS, other origins are not allowed', async () => {
    const gateway = createYogaServer({
      upstream: client,
      logger: quiet(),
      corsOrigins: ['https://a.example', 'https://b.example'],
    });
    expect((await preflight(gateway, 'https://b.example')).get('access-control-allow-origin')).toBe(
      'https://b.example',
    );
    // A refused origin gets no CORS header at all: `null` would admit every page whose origin is
    // `null` (sandboxed iframes, data: and file: pages).
    const refused = await preflight(gateway, 'https://evil.example');
    expect([...refused.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  async function simplePost(gateway: ReturnType<typeof createYogaServer>, origin: string) {
    const response = await gateway.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    await response.arrayBuffer();
    return response.headers;
  }

  it('with CORS_ORIGINS, an answer to a refused origin carries no Access-Control-Allow-Origin', async () => {
    const gateway = createYogaServer({
      upstream: client,
      logger: quiet(),
      corsOrigins: ['https://a.example', 'https://b.example'],
    });
    expect((await simplePost(gateway, 'https://a.example')).get('access-control-allow-origin')).toBe(
      'https://a.example',
    );
    for (const origin of ['https://evil.example', 'null']) {
      const headers = await simplePost(gateway, origin);
      expect(headers.get('access-control-allow-origin'), origin).toBeNull();
      expect(headers.get('access-control-expose-headers'), origin).toBeNull();
      // The answer still varies by Origin, so a cache never hands one origin's answer to another.
      expect(headers.get('vary'), origin).toContain('Origin');
    }
  });

  it('with one origin listed, another origin is not told that origin either', async () => {
    const gateway = createYogaServer({
      upstream: client,
      logger: quiet(),
      corsOrigins: ['https://a.example'],
    });
    expect((await preflight(gateway, 'https://evil.example')).get('access-control-allow-origin')).toBeNull();
    expect((await preflight(gateway, 'https://a.example')).get('access-control-allow-origin')).toBe(
      'https://a.example',
    );
  });

  it('the GraphiQL page, and its refusal, never carry CORS headers, whatever the origin', async () => {
    const accept = 'text/html,application/xhtml+xml,*/*;q=0.8';
    for (const graphiql of [true, false]) {
      const gateway = createYogaServer({ upstream: client, logger: quiet(), graphiql });
      const response = await gateway.fetch('http://gateway/graphql', {
        headers: { accept, origin: 'https://app.example' },
      });
      expect(response.status).toBe(graphiql ? 200 : 406);
      await response.arrayBuffer();
      const names = [...response.headers.keys()];
      expect(
        names.filter((name) => name.startsWith('access-control-')),
        `graphiql ${graphiql}`,
      ).toEqual([]);
    }
  });

  it('the origin null is allowed only when listed, even with CORS_ORIGINS=*', async () => {
    const any = createYogaServer({ upstream: client, logger: quiet() });
    expect((await preflight(any, 'null')).get('access-control-allow-origin')).toBeNull();
    expect((await simplePost(any, 'null')).get('access-control-allow-origin')).toBeNull();
    const listed = createYogaServer({ upstream: client, logger: quiet(), corsOrigins: ['null'] });
    expect((await simplePost(listed, 'null')).get('access-control-allow-origin')).toBe('null');
  });

  it('exposes the request id, the deprecation and the cost headers to browser code', async () => {
    const gateway = createYogaServer({ upstream: client, logger: quiet() });
    const response = await gateway.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { origin: 'https://app.example', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.headers.get('access-control-expose-headers')).toBe(
      'x-request-id, deprecation, sunset, x-cost-estimated, x-cost-actual, x-cost-budget-maximum, x-cost-budget-available',
    );
  });
});
