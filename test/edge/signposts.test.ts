// @tier integration

import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';

// Paths people try before reading (#44 item 5): each answers with where to go, never an empty 404.
describe('the paths people try first', () => {
  let gateway: RunningGateway;
  useGateway({ tokens: [] }, (started) => {
    ({ gateway } = started);
  });

  it.each([
    ['/', 200],
    ['/?x=1', 200],
    ['/ready', 404],
    ['/healthz', 404],
  ])('%s points to /graphql, /health and /readiness in JSON by default (%i)', async (path, status) => {
    const response = await fetch(`${gateway.origin}${path}`);
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({
      message:
        'pet-gateway: GraphQL (GraphiQL in a browser) is at /graphql, liveness at /health, readiness at /readiness',
      graphql: '/graphql',
      health: '/health',
      readiness: '/readiness',
    });
  });

  it('answers a browser with a small HTML page linking them', async () => {
    const response = await fetch(`${gateway.origin}/healthz`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await response.text();
    for (const path of ['/graphql', '/health', '/readiness']) expect(page).toContain(`<a href="${path}">`);
  });

  it('leaves other unknown paths to the empty 404 and /health to itself', async () => {
    expect((await fetch(`${gateway.origin}/nope`)).status).toBe(404);
    expect(await (await fetch(`${gateway.origin}/health`)).json()).toMatchObject({ status: 'ok' });
  });
});

describe('a path the gateway does not serve (#64 row 10)', () => {
  let gateway: RunningGateway;
  useGateway({ tokens: [] }, (started) => {
    ({ gateway } = started);
  });

  it.each(['/nope', '/graphql/extra', '/graphqlx', '/v1/pets', '/metrics'])(
    '%s is 404 NOT_FOUND with where to go, not a bare 404',
    async (path) => {
      for (const method of ['GET', 'POST']) {
        const response = await fetch(`${gateway.origin}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          ...(method === 'POST' ? { body: '{"query":"{ __typename }"}' } : {}),
        });
        expect(response.status, method).toBe(404);
        const body = (await response.json()) as {
          errors: Array<{ message: string; extensions: { code: string } }>;
        };
        expect(body.errors[0]?.extensions.code).toBe('NOT_FOUND');
        expect(body.errors[0]?.message).toContain('/graphql');
      }
    },
  );

  it('still serves /graphql with a query string, and its GET and POST', async () => {
    const get = await fetch(`${gateway.url}?query=${encodeURIComponent('{ __typename }')}`);
    expect(await get.json()).toEqual({ data: { __typename: 'Query' } });
  });
});
