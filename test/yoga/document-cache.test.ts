// @tier unit

import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parse } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { schema } from '../../src/schema/index.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { createYogaServer } from '../../src/yoga/server.ts';
import { documentBytes, tokensOf, useDocumentCache } from '../../src/yoga/validation/document-cache.ts';

// What Yoga keeps of a document it has parsed and validated must hold nothing of the request that
// sent it: the refusal of an invalid document is kept for the next request sending the same
// text, and a request's variables (up to MAX_BODY_BYTES each) must not live as long as that.

/** `global.gc` without --expose-gc: the flag can still be set at run time, then read from a fresh context. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

// Never called: invalid documents make no upstream call.
const client = createUpstreamClient({
  baseUrl: new URL('http://127.0.0.1:9/v1'),
  timeoutMs: 1000,
  connections: 1,
});
afterAll(() => client.close());

const yoga = createYogaServer({ upstream: client, logger: createLogger('silent') });

/**
 * Sends `query` with a 60 kB variable as the fast lane hands Yoga a body it has read (`lane.parsed`),
 * so the variables object Yoga works on is one made here, and only a WeakRef to it is returned
 * (made in this function, it is on no caller's stack): with the answer's status and bytes.
 */
async function send(query: string) {
  const variables = { note: 'x'.repeat(60_000) };
  const response = await yoga.fetch(
    'http://gateway/graphql',
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
    { lane: { parsed: { query, variables } } },
  );
  return { sent: new WeakRef(variables), status: response.status, body: await response.text() };
}

const CASES = {
  'an unknown field': 'query Q($note: String) { pets { nothing } }',
  'a syntax error': 'query Q($note: String) { pets { id }',
  'a conflict of response names': 'query Q($note: String) { pets { id: name id } }',
  'too many tokens': `query Q($note: String) { pets { ${'id '.repeat(900)}} }`,
};

describe('the parse and validation cache', () => {
  for (const [name, query] of Object.entries(CASES)) {
    it(`keeps no request's variables after refusing ${name}, and refuses it again with the same bytes`, async () => {
      const gc = collector();
      // The first request fills the cache; the second is answered from it.
      const answers = [await send(query), await send(query)];
      const sent = answers.map((answer) => answer.sent);
      expect(answers[0]?.body).toMatch(/^\{"errors":\[\{"message"/);
      expect(answers[1]?.body).toBe(answers[0]?.body);
      expect(answers[1]?.status).toBe(answers[0]?.status);
      for (let i = 0; i < 4 && sent.some((ref) => ref.deref() !== undefined); i++) {
        await sleep(10);
        gc();
      }
      expect(sent.map((ref) => ref.deref() === undefined)).toEqual([true, true]);
    });
  }
});

describe('the parse and validation cache’s bound', () => {
  it('holds at most its bytes: past them, the text used least recently is parsed again', async () => {
    let parses = 0;
    const counting: Plugin = {
      onParse: ({ parseFn, setParseFn }) =>
        setParseFn((...args: Parameters<typeof parseFn>) => {
          parses += 1;
          return parseFn(...args);
        }),
    };
    const texts = ['{ a: __typename }', '{ b: __typename }', '{ c: __typename }'] as const;
    // Room for two of these texts, not three; far more entries than that.
    const bytes =
      2.5 * documentBytes(texts[0], { tokens: tokensOf(parse(texts[0]), texts[0]), validated: new Map() });
    const bare = createYoga({
      schema,
      plugins: [counting, useDocumentCache({ entries: 100, bytes })],
      // Yoga's own cache, which this one replaces, would answer first.
      parserAndValidationCache: false,
      logging: false,
    });
    const ask = async (query: string) => {
      const response = await bare.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      expect(response.status).toBe(200);
    };
    const [a, b, c] = texts;
    for (const text of [a, b, a, c]) await ask(text);
    expect(parses).toBe(3); // `a` came from the cache, and `b` went for `c`
    await ask(a);
    expect(parses).toBe(3);
    await ask(b);
    expect(parses).toBe(4); // `b` again, and `c` (now the least recently used) goes
    await ask(c);
    expect(parses).toBe(5);
  });
});
