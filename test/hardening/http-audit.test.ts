// @tier integration

import {
  buildClientSchema,
  getIntrospectionQuery,
  type IntrospectionOptions,
  type IntrospectionQuery,
} from 'graphql';
import { type Audit, serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { LEAK } from './codes.ts';

// graphql-http's GraphQL-over-HTTP conformance audits, against the gateway with every limit on.
// They send operations such as `{ __typename }` without Authorization: none of them needs the
// upstream, so none may reach it.

/** Names and ids only; the audits that run are built against the live URL. */
const listed = serverAudits({ url: 'http://127.0.0.1:1/graphql' });
const required = listed.filter((audit) => /^(MUST|SHOULD)\b/.test(audit.name));
const optional = listed.filter((audit) => !/^(MUST|SHOULD)\b/.test(audit.name));

let upstream: FakeUpstream;
let gateway: RunningGateway;
let live: Map<string, Audit>;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ upstreamUrl: upstream.url });
  live = new Map(serverAudits({ url: gateway.url, fetchFn: fetch }).map((audit) => [audit.id, audit]));
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('graphql-http server audits', () => {
  it('lists MUST and SHOULD audits', () => {
    expect(required.length).toBeGreaterThan(30);
  });

  for (const { id, name } of required) {
    it(name, async () => {
      const audit = live.get(id);
      if (!audit) throw new Error(`audit ${id} missing`);
      const result = await audit.fn();
      if (result.status !== 'ok') {
        const body = await result.response.text().catch(() => '');
        expect.fail(
          `${result.status}: ${result.reason}; response ${result.response.status} ${body.slice(0, 300)}`,
        );
      }
    });
  }

  // The MAY audits hold too: a client built against another GraphQL-over-HTTP server meets the
  // same answers here, so each one is a test of its own.
  it('lists MAY audits', () => {
    expect(optional.length).toBeGreaterThan(20);
  });

  for (const { id, name } of optional) {
    it(name, async () => {
      const audit = live.get(id);
      if (!audit) throw new Error(`audit ${id} missing`);
      const result = await audit.fn();
      expect(result.status, result.status === 'ok' ? '' : result.reason).toBe('ok');
    });
  }

  it('never reached the upstream', () => {
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('standard introspection under the limits', () => {
  const variants: Array<[string, IntrospectionOptions | undefined]> = [
    ['default options', undefined],
    ['no descriptions', { descriptions: false }],
    ['as GraphiQL sends it', { inputValueDeprecation: true, schemaDescription: true }],
    [
      'as graphql-codegen sends it',
      {
        descriptions: true,
        specifiedByUrl: false,
        directiveIsRepeatable: true,
        schemaDescription: false,
        inputValueDeprecation: true,
      },
    ],
    [
      'every option on',
      {
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      },
    ],
  ];
  for (const [name, options] of variants) {
    for (const method of ['POST', 'GET'] as const) {
      it(`${name}, over ${method}, without a key`, async () => {
        const query = getIntrospectionQuery(options);
        const headers = { accept: 'application/graphql-response+json, application/json' };
        const response =
          method === 'POST'
            ? await fetch(gateway.url, {
                method,
                headers: { ...headers, 'content-type': 'application/json' },
                body: JSON.stringify({ query, operationName: 'IntrospectionQuery' }),
              })
            : await fetch(`${gateway.url}?${new URLSearchParams({ query })}`, { headers });
        const text = await response.text();
        expect(response.status, text.slice(0, 300)).toBe(200);
        const body = JSON.parse(text) as { data?: IntrospectionQuery; errors?: unknown };
        expect(body.errors).toBeUndefined();
        const schema = buildClientSchema(body.data as IntrospectionQuery);
        expect(Object.keys(schema.getQueryType()?.getFields() ?? {}).sort()).toEqual(['pet', 'pets']);
        expect(schema.getType('Pet')).toBeDefined();
        expect(text).not.toMatch(LEAK);
        expect(upstream.requests).toHaveLength(0);
      });
    }
  }
});
