import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { createGateway } from '../../src/server.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';

// GRAPHIQL and INTROSPECTION, on by default, each switched off on its own.
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

async function page(gateway: ReturnType<typeof createGateway>) {
  const response = await gateway.fetch('http://gateway/graphql', { headers: { accept: 'text/html' } });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

async function introspect(gateway: ReturnType<typeof createGateway>) {
  const response = await gateway.fetch('http://gateway/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  return { status: response.status, body: await response.json() };
}

describe('GRAPHIQL and INTROSPECTION', () => {
  it('both on by default: the page is GraphiQL with the example, and introspection answers', async () => {
    const gateway = createGateway({ upstream: client, logger: quiet() });
    const html = await page(gateway);
    expect(html.type).toContain('text/html');
    expect(html.text).toContain('AvailablePets');
    expect(html.text).toContain('Bearer <your API key>');
    const schema = await introspect(gateway);
    expect(schema.body.data.__schema.queryType.name).toBe('Query');
  });

  it('GRAPHIQL off: a browser gets no GraphiQL page, GraphQL still works', async () => {
    const gateway = createGateway({ upstream: client, logger: quiet(), graphiql: false });
    const html = await page(gateway);
    expect(html.text).not.toContain('AvailablePets');
    expect(html.type ?? '').not.toContain('text/html');
    expect((await introspect(gateway)).body.data.__schema.queryType.name).toBe('Query');
  });

  it('INTROSPECTION off: __schema and __type are refused, ordinary queries still run', async () => {
    const gateway = createGateway({ upstream: client, logger: quiet(), introspection: false });
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
