// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { post, postJson } from '../support/graphql.ts';

// Request errors are read by people: each says what was wrong in words that are true for the
// request sent (no "Syntax Error" for a document that parses, operations named by name).

const AUTH = 'Bearer messages-token';

let upstream: FakeUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add('messages-token');
  gateway = await startGateway({ upstreamUrl: upstream.url });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: pets { id }`).join(' ')} }`;
const deep =
  '{ pets { id } __type(name: "Pet") { fields { type { ofType { ofType { ofType { name } } } } } } }';

describe('limit messages are not called syntax errors', () => {
  it.each([
    ['aliases', aliases(11), 'ALIAS_LIMIT_EXCEEDED', 'Aliases limit of 10 exceeded, found 11.'],
    ['tokens', `{ ${'__typename '.repeat(801)}}`, 'TOKEN_LIMIT_EXCEEDED', 'Token limit of 800 exceeded.'],
    ['depth', `{ pets { id } a: ${deep.slice(2, -2)} }`, 'DEPTH_LIMIT_EXCEEDED', undefined],
  ])('%s', async (_name, query, code, message) => {
    const result = await postJson(gateway.url, { query }, AUTH);
    expect(result.status).toBe(400);
    const [error] = result.errors ?? [];
    expect(error?.extensions?.code).toBe(code);
    expect(error?.message).not.toMatch(/syntax/i);
    if (message) expect(error?.message).toBe(message);
  });

  it('a real syntax error still says so', async () => {
    const result = await postJson(gateway.url, { query: '{ pets { id }' }, AUTH);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(result.errors?.[0]?.message).toMatch(/^Syntax Error: /);
  });
});

describe('operationName that picks no operation', () => {
  const document = 'query ListAll { pets { id } } query One { pet(id: "1") { id } }';

  it.each([
    [document, 'Missing', 'The document holds no operation named "Missing"; it holds "ListAll", "One".'],
    [
      document,
      undefined,
      'The document holds 2 operations ("ListAll", "One"): name the one to run in operationName.',
    ],
    [
      '{ pets { id } }',
      'ListAll',
      'The document holds no operation named "ListAll"; it holds an unnamed operation.',
    ],
    ['fragment F on Pet { id }', undefined, 'The document holds no operation to run, only fragments.'],
  ])('%s with operationName %j', async (query, operationName, message) => {
    const result = await postJson(gateway.url, { query, operationName }, AUTH);
    expect(result.status).toBe(400);
    expect(result.errors).toEqual([{ message, extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } }]);
    expect(upstream.requests).toEqual([]);
  });

  it('lists at most 10 names', async () => {
    const query = Array.from({ length: 30 }, (_, i) => `query Q${i} { __typename }`).join(' ');
    const result = await postJson(gateway.url, { query }, AUTH);
    expect(result.errors?.[0]?.message).toMatch(/"Q9", … \(30 in all\)\): name the one/);
  });
});

describe('GET parameters', () => {
  it.each(['variables', 'extensions'])(
    'a %s parameter that is not JSON is BAD_REQUEST, not an internal error',
    async (name) => {
      const url = `${gateway.url}?${new URLSearchParams({ query: '{ __typename }', [name]: '{"limit":' })}`;
      const response = await fetch(url, { headers: { accept: 'application/graphql-response+json' } });
      expect(response.status).toBe(400);
      expect((await response.json()).errors).toEqual([
        { message: `The ${name} parameter is not valid JSON.`, extensions: { code: 'BAD_REQUEST' } },
      ]);
    },
  );
});

describe('MAX_ALIASES counts every alias', () => {
  it('1,000 aliases of __typename are refused, as 11 are at the default limit', async () => {
    // Tokens raised so the alias limit is the one that answers (1,000 aliases are 3,000 tokens).
    const roomy = await startGateway({
      upstreamUrl: upstream.url,
      limits: { ...DEFAULT_LIMITS, maxTokens: 10_000 },
    });
    try {
      const typenames = (n: number) =>
        `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`;
      const many = await postJson(roomy.url, { query: typenames(1000) }, AUTH);
      expect(many.status).toBe(400);
      expect(many.errors?.[0]?.extensions?.code).toBe('ALIAS_LIMIT_EXCEEDED');
      expect(many.errors?.[0]?.message).toBe('Aliases limit of 10 exceeded, found 1000.');
      const eleven = await postJson(gateway.url, { query: typenames(11) }, AUTH);
      expect(eleven.errors?.[0]?.extensions?.code).toBe('ALIAS_LIMIT_EXCEEDED');
      // Unaliased __typename (what Apollo Client adds to every selection) is no alias.
      const plain = await postJson(gateway.url, { query: `{ ${'__typename '.repeat(20)}}` }, AUTH);
      expect(plain.errors).toBeUndefined();
    } finally {
      await roomy.close();
    }
  });
});

describe('every document limit answers 400 whatever the client accepts (#64 row 5)', () => {
  const LIMITS = [
    ['aliases', aliases(11), 'ALIAS_LIMIT_EXCEEDED'],
    ['tokens', `{ ${'__typename '.repeat(801)}}`, 'TOKEN_LIMIT_EXCEEDED'],
    ['depth', `{ pets { id } a: ${deep.slice(2, -2)} }`, 'DEPTH_LIMIT_EXCEEDED'],
    [
      'directives',
      `{ pets { id ${'@skip(if: false) '.repeat(DEFAULT_LIMITS.maxDirectives + 1)}} }`,
      'DIRECTIVE_LIMIT_EXCEEDED',
    ],
  ] as const;
  const ACCEPTS = ['application/graphql-response+json', 'application/json', '*/*'];
  it.each(
    LIMITS.flatMap(([name, query, code]) => ACCEPTS.map((accept) => [name, accept, query, code] as const)),
  )('%s under Accept: %s', async (_name, accept, query, code) => {
    const answer = await post(gateway.url, { query }, { authorization: AUTH, accept });
    expect(answer.body.errors?.[0]?.extensions?.code).toBe(code);
    expect(answer.status).toBe(400);
  });
});

describe('a method /graphql does not take is 405 METHOD_NOT_ALLOWED, as the codes table says (#64 row 10)', () => {
  it.each(['PUT', 'DELETE', 'PATCH'])('%s', async (method) => {
    const response = await fetch(gateway.url, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST');
    const body = (await response.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(body.errors[0]?.extensions.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('a mutation over GET', async () => {
    const response = await fetch(`${gateway.url}?query=${encodeURIComponent('mutation { __typename }')}`, {
      headers: { accept: 'application/json', authorization: AUTH },
    });
    expect(response.status).toBe(405);
    const body = (await response.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(body.errors[0]?.extensions.code).toBe('METHOD_NOT_ALLOWED');
  });
});
