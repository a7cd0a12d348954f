// @tier integration

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryDocumentStore } from '../../src/stores/registered-documents.ts';
import { loadPersistedDocuments } from '../../src/yoga/request/persisted-documents.ts';
import type { FakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { code, MANIFEST, persisted, post, sha256, startApqUpstream } from './apq-requests.ts';

// Automatic persisted queries beside trusted documents (PERSISTED_OPERATIONS): in allow mode a
// manifest id or hash must match its text and other documents still register; in require mode
// nothing registers and GraphiQL is not served.

let upstream: FakeUpstream;
const gateways = {} as Record<'allow' | 'require', RunningGateway>;

beforeAll(async () => {
  upstream = await startApqUpstream();
  const documents = loadPersistedDocuments(MANIFEST);
  gateways.allow = await startGateway({
    upstreamUrl: upstream.url,
    gateway: {
      automaticPersistedQueries: createMemoryDocumentStore(),
      persistedOperations: { mode: 'allow', documents },
    },
  });
  gateways.require = await startGateway({
    upstreamUrl: upstream.url,
    gateway: {
      // Given on purpose: require mode must not use it.
      automaticPersistedQueries: createMemoryDocumentStore(),
      persistedOperations: { mode: 'require', documents },
    },
  });
});

afterAll(async () => {
  for (const gateway of Object.values(gateways)) await gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

describe('trusted documents', () => {
  const manifest = loadPersistedDocuments(MANIFEST);
  const [listId, listText] = [...manifest].find(([, text]) => text.startsWith('query ListPets(')) ?? [
    'ListPets is missing from the manifest',
    '',
  ];
  const hex = listId.replace(/^sha256:/, '');

  it('allow: a documentId or hash beside different text is refused, not run', async () => {
    const other = '{ pets(limit: 1) { name } }';
    for (const body of [
      { documentId: listId, query: other },
      { query: other, extensions: persisted(hex) },
    ]) {
      const answer = await post(gateways.allow, body);
      expect(answer.status).toBe(400);
      expect(code(answer)).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    }
    expect(upstream.requests).toEqual([]);
  });

  it('allow: the id beside its own text runs', async () => {
    const answer = await post(gateways.allow, {
      documentId: listId,
      query: listText,
      variables: { limit: 1 },
    });
    expect(answer.body.errors).toBeUndefined();
  });

  it('allow: documents outside the manifest register by hash, one round trip after the first', async () => {
    const text = 'query AllowApq { pets(limit: 2) { name } }';
    expect(code(await post(gateways.allow, { extensions: persisted(sha256(text)) }))).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
    await post(gateways.allow, { query: text, extensions: persisted(sha256(text)) });
    expect((await post(gateways.allow, { extensions: persisted(sha256(text)) })).body.errors).toBeUndefined();
  });

  it('require: registration is refused and nothing is registered', async () => {
    const text = 'query RequireApq { pets(limit: 2) { name } }';
    const answer = await post(gateways.require, { query: text, extensions: persisted(sha256(text)) });
    expect(answer.status).toBe(403);
    expect(code(answer)).toBe('PERSISTED_OPERATION_REQUIRED');
    const again = await post(gateways.require, { extensions: persisted(sha256(text)) });
    expect(code(again)).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(again.body.errors?.[0]?.message).toBe('PersistedQueryNotFound');
  });

  it('require: GraphiQL is not served (its documents would all be refused)', async () => {
    const response = await fetch(gateways.require.url, { headers: { accept: 'text/html' } });
    // A browser asking for HTML gets no page: 406, as for any HTML request to a GraphQL endpoint.
    expect(response.status).toBe(406);
    expect(response.headers.get('content-type') ?? '').not.toMatch(/html/);
    await response.body?.cancel();
    const allowed = await fetch(gateways.allow.url, { headers: { accept: 'text/html' } });
    expect(allowed.headers.get('content-type')).toMatch(/html/);
    await allowed.body?.cancel();
  });
});
