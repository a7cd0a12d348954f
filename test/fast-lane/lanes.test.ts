// @tier integration

import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import { createRateLimit, type RateLimit } from '../../src/policy/rate-limit.ts';
import { createMemoryDocumentStore } from '../../src/stores/registered-documents.ts';
import { createMemoryCache } from '../../src/stores/response-cache.ts';
import type { ResponseCacheOptions } from '../../src/upstream/cached-calls.ts';
import { BIG_ID, type FakeUpstream, seedPets, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';

// One behaviour, three paths. The same requests go to a gateway with FAST_LANE off (Yoga answers
// everything), to one whose fast lane runs compiled execution only (PLANS=off), and to one with the
// defaults (a compiled plan of upstream calls where the operation allows one), after the document
// has been warmed so the fast lane holds it prepared. Status, body bytes, every header but Date, the
// upstream calls, the operation log line and the metrics must be the same. Successes must be served
// by the fast lane (by a plan, where one was compiled); failures are executed by it and answered by
// Yoga from that result, never executed twice.

const TOKEN = 'lanes-token';
const AUTH = `Bearer ${TOKEN}`;
const DOCUMENT_ID = 'sha256:lanes-list';
const PERSISTED = '{ pets(limit: 2) { id name } }';

interface Side {
  gateway: RunningGateway;
  logs: string[];
  metrics: Metrics;
}

let upstream: FakeUpstream;
let yoga: Side;
let compiled: Side;
let fast: Side;

async function side(
  fastLane: boolean,
  rateLimit?: RateLimit,
  cache?: ResponseCacheOptions,
  plans = true,
): Promise<Side> {
  const logs: string[] = [];
  const metrics = createMetrics();
  const gateway = await startGateway({
    upstreamUrl: upstream.url,
    ...(cache ? { cache } : {}),
    timeoutMs: 400,
    // A name maximum, as NAME_MAX_LENGTH sets one: both lanes refuse past it alike.
    limits: { ...DEFAULT_LIMITS, nameMaxLength: 200 },
    // One attempt, no breaker surprises: a fault must hit both sides identically.
    client: { maxRetries: 0 },
    gateway: {
      fastLane,
      plans,
      metrics,
      logger: createLogger('info', { write: (line: string) => void logs.push(line) }),
      persistedOperations: { mode: 'allow', documents: new Map([[DOCUMENT_ID, PERSISTED]]) },
      // Each side registers APQ documents in a store of its own.
      automaticPersistedQueries: createMemoryDocumentStore(),
      ...(rateLimit ? { rateLimit } : {}),
    },
  });
  return { gateway, logs, metrics };
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  seedPets(upstream, TOKEN);
  yoga = await side(false);
  compiled = await side(true, undefined, undefined, false);
  fast = await side(true);
});

afterAll(async () => {
  await yoga.gateway.close();
  await compiled.gateway.close();
  await fast.gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
});

/** An operation's parameters, or a batch of them. */
type Body = Record<string, unknown> | Array<Record<string, unknown>>;

interface Case {
  name: string;
  body: Body;
  /** A body with the same document that succeeds, sent first so the fast lane prepares it. @default body */
  warm?: Body;
  /** Sent once to each side before warming (an APQ registration, over POST). */
  register?: Body;
  /** @default 'POST' */
  method?: 'GET';
  headers?: Record<string, string>;
  /** Installs an upstream fault before each side's request. */
  setup?: () => void;
  /** The first error's code; undefined for a success, which the fast lane must serve itself. */
  code?: string;
  /** The request never reaches the fast lane's execution (Yoga serves it whole). */
  yogaOnly?: boolean;
  /** A success no plan can answer (the compiled path does). @default false */
  unplanned?: boolean;
}

const headersFault = (extra: Record<string, string>) => () =>
  upstream.fault(
    /^\/v1\/pets\/2$/,
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...extra });
      res.end('{"id":2,"name":"Tom","categoryId":1,"status":"sold"}');
    },
    1,
  );

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persistedQuery = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
const APQ_LIST = 'query ApqList($limit: Int) { pets(limit: $limit) { id name status } }';
const APQ_PET = 'query ApqPet($id: ID!) { pet(id: $id) { id name } }';
const APQ_ADD =
  'mutation ApqAdd($name: String!) { createPet(input: { name: $name, categoryId: "2" }) { name } }';

const cases: Case[] = [
  { name: 'a list with every field', body: { query: '{ pets(limit: 20) { id name categoryId status } }' } },
  {
    name: 'aliases, __typename, a status filter and an operation name',
    body: {
      query: 'query Sold { a: pets(status: SOLD, limit: 2) { __typename id } b: pets(limit: 1) { n: name } }',
    },
  },
  {
    name: 'variables, an id beyond 2^53 and the deprecated pet(id)',
    body: {
      query:
        'query Both($limit: Int, $id: ID!) { pets(limit: $limit) { id } pet(id: $id) { name categoryId } }',
      variables: { limit: 3, id: BIG_ID },
    },
  },
  {
    name: "the upstream's own Deprecation and Sunset carried over",
    body: { query: 'query One($id: ID!) { pet(id: $id) { id name status } }', variables: { id: '2' } },
    setup: headersFault({ deprecation: '@1700000000', sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' }),
  },
  {
    name: 'a client name and version on a deprecated field (log and metric)',
    body: { query: '{ pet(id: "3") { name } }' },
    headers: { 'graphql-client-name': 'ios-app', 'graphql-client-version': '4.2.0' },
  },
  {
    name: 'createPet, sent exactly once per request',
    body: {
      query: 'mutation Add($input: NewPetInput!) { createPet(input: $input) { name categoryId status } }',
      variables: { input: { name: 'Kit', categoryId: '9223372036854775807', status: 'PENDING' } },
    },
  },
  { name: 'a persisted documentId', body: { documentId: DOCUMENT_ID } },
  {
    name: 'Accept: application/graphql-response+json',
    body: { query: '{ pets(limit: 1) { id } }' },
    headers: { accept: 'application/graphql-response+json' },
  },
  {
    name: 'Accept: a client list (graphql-response+json, application/json)',
    body: { query: '{ pets(limit: 1) { id } }' },
    headers: { accept: 'application/graphql-response+json, application/json' },
  },
  { name: 'Accept: */*', body: { query: '{ pets(limit: 1) { id } }' }, headers: { accept: '*/*' } },
  {
    name: 'a browser Origin (CORS headers)',
    body: { query: '{ pets(limit: 1) { id } }' },
    headers: { origin: 'https://app.example', accept: 'application/json' },
  },
  {
    name: 'Accept-Encoding: gzip on an answer over the threshold (compressed)',
    body: {
      query: `{ ${Array.from({ length: 8 }, (_, i) => `a${i}: pets(limit: 20) { ...P }`).join(' ')} } fragment P on Pet { id name categoryId status }`,
    },
    headers: { 'accept-encoding': 'gzip' },
  },
  {
    name: 'Accept-Encoding: br, gzip (brotli chosen)',
    body: {
      query: `{ ${Array.from({ length: 8 }, (_, i) => `b${i}: pets(limit: 20) { ...P }`).join(' ')} } fragment P on Pet { id name categoryId status }`,
    },
    headers: { 'accept-encoding': 'br, gzip' },
  },
  {
    name: 'Accept-Encoding on a small answer (sent as it is)',
    body: { query: '{ pets(limit: 1) { name } }' },
    headers: { 'accept-encoding': 'gzip, deflate, br' },
  },
  {
    name: 'Authorization with a lowercase scheme (forwarded as Bearer)',
    body: { query: '{ pets(limit: 2) { name status } }' },
    headers: { authorization: `bearer ${TOKEN}` },
  },
  {
    name: 'plan: one response key from two fields, fragments and inline fragments merged in order',
    body: {
      query:
        '{ pets(limit: 3) { id } pets(limit: 3) { ...F ... on Pet { s: status id } } __typename } fragment F on Pet { name __typename }',
    },
  },
  { name: 'plan: only __typename (no upstream call)', body: { query: '{ __typename }' } },
  {
    name: 'plan: the same pet twice and a list in one operation (one call each)',
    body: {
      query: '{ a: pet(id: "2") { name } b: pet(id: "002") { id } c: pets(limit: 2, status: SOLD) { id } }',
    },
  },
  {
    name: 'plan: two creates in one mutation, in order, with __typename',
    body: {
      query:
        'mutation Two { __typename a: createPet(input: { name: "A", categoryId: "1" }) { name categoryId } b: createPet(input: { name: "B", categoryId: "2", status: SOLD }) { status } }',
    },
  },
  {
    name: 'plan: a mutation whose second create the upstream refuses (the first sent once)',
    code: 'PET_EXISTS',
    warm: {
      query:
        'mutation Pair($b: NewPetInput!) { a: createPet(input: { name: "A", categoryId: "1" }) { name } b: createPet(input: $b) { name } }',
      variables: { b: { name: 'B', categoryId: '1' } },
    },
    body: {
      query:
        'mutation Pair($b: NewPetInput!) { a: createPet(input: { name: "A", categoryId: "1" }) { name } b: createPet(input: $b) { name } }',
      variables: { b: { name: 'Rex', categoryId: '1' } },
    },
    setup: () =>
      upstream.fault(
        /^\/v1\/pets$/,
        (_req, res, body) => {
          if (!body.includes('Rex')) {
            res.writeHead(201, { 'content-type': 'application/json' });
            res.end('{"id":77,"name":"A","categoryId":1}');
            return;
          }
          res.writeHead(409, { 'content-type': 'application/json' });
          res.end('{"code":"PET_EXISTS","message":"Rex is already here.","status":409}');
        },
        2,
      ),
  },
  {
    name: 'plan: a list received, then a pet the upstream does not have (nothing sent twice)',
    code: 'PET_NOT_FOUND',
    warm: {
      query: 'query M($id: ID!) { pets(limit: 2) { id } pet(id: $id) { name } }',
      variables: { id: '2' },
    },
    body: {
      query: 'query M($id: ID!) { pets(limit: 2) { id } pet(id: $id) { name } }',
      variables: { id: '404' },
    },
  },
  {
    // graphql-jit orders a condition's fields wrongly, so such operations are never compiled, hence
    // never prepared: Yoga answers them.
    name: 'no plan: @include (Yoga interprets it)',
    body: {
      query: 'query I($on: Boolean!) { pets(limit: 1) { id name @include(if: $on) } }',
      variables: { on: true },
    },
    yogaOnly: true,
  },
  {
    name: 'incremental: @defer to a client that accepts only JSON (merged into one answer)',
    body: { query: '{ a: pets(limit: 1) { id } ... @defer { b: pets(limit: 2) { name } } }' },
    yogaOnly: true,
  },
  {
    name: 'incremental: @defer over multipart/mixed (Yoga writes the parts)',
    body: { query: '{ a: pets(limit: 1) { id } ... @defer { b: pets(limit: 2) { name } } }' },
    headers: { accept: 'multipart/mixed;deferSpec=20220824, application/json;q=0.9' },
    yogaOnly: true,
  },
  {
    name: 'incremental: @stream over SSE',
    body: { query: '{ pets(limit: 2) @stream(initialCount: 1) { id name } }' },
    headers: { accept: 'text/event-stream' },
    yogaOnly: true,
  },
  {
    name: 'batch: two operations in one POST, one JSON array',
    body: [{ query: '{ pets(limit: 1) { id } }' }, { query: 'query Two { a: pets(limit: 2) { name } }' }],
  },
  {
    name: 'batch: two entries asking for the same list (one upstream call, on the first line)',
    body: [{ query: '{ pets(limit: 3) { id } }' }, { query: 'query Same { pets(limit: 3) { name } }' }],
  },
  {
    name: 'batch: one entry the upstream fails (the fast lane hands the batch over, nothing sent twice)',
    body: [{ query: '{ pets(limit: 4) { id } }' }, { query: 'query Bad { pet(id: "404") { id } }' }],
    warm: [{ query: '{ pets(limit: 4) { id } }' }, { query: 'query Bad { pet(id: "2") { id } }' }],
    code: 'PET_NOT_FOUND',
  },
  {
    name: 'batch: an entry with @defer, merged inside the array',
    body: [{ query: '{ a: pets(limit: 1) { id } ... @defer { b: pets(limit: 2) { name } } }' }],
    headers: { accept: 'multipart/mixed, application/json' },
    yogaOnly: true,
  },
  {
    name: 'no plan: two operations in the document',
    body: {
      query: 'query A { pets(limit: 1) { id } } query B { pets(limit: 2) { name } }',
      operationName: 'B',
    },
    unplanned: true,
  },
  {
    name: 'no plan: introspection beside a list',
    body: { query: '{ __schema { queryType { name } } pets(limit: 1) { id } }' },
    unplanned: true,
  },
  {
    name: 'an ID variable sent as a JSON number past 2^53 (rounded, refused)',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: 2 ** 53 + 2 } },
    yogaOnly: true,
  },
  {
    name: 'an upstream 404 after the document was prepared',
    code: 'PET_NOT_FOUND',
    warm: { query: 'query Pet($id: ID!) { pet(id: $id) { id name } }', variables: { id: '2' } },
    body: { query: 'query Pet($id: ID!) { pet(id: $id) { id name } }', variables: { id: '404' } },
  },
  {
    name: 'an upstream 500 Error body on a list',
    code: 'BOOM',
    body: { query: '{ pets(limit: 2) { id } }' },
    setup: () =>
      upstream.fault(
        /^\/v1\/pets/,
        (_req, res) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"code":"BOOM","message":"exploded","status":500}');
        },
        1,
      ),
  },
  {
    name: 'an upstream that never answers (deadline)',
    code: 'UPSTREAM_TIMEOUT',
    body: { query: '{ pets(limit: 4) { id } }' },
    setup: () => upstream.fault(/^\/v1\/pets/, () => {}, 1),
  },
  {
    name: 'a limit outside 1..100 in variables',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query L($l: Int) { pets(limit: $l) { id } }', variables: { l: 2 } },
    body: { query: 'query L($l: Int) { pets(limit: $l) { id } }', variables: { l: 101 } },
  },
  {
    name: 'a variable of the wrong type',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: { nested: true } } },
  },
  {
    name: 'a missing required variable',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: {} },
  },
  {
    name: 'an id out of int64 range',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '9223372036854775808' } },
  },
  {
    name: 'no Authorization header',
    code: 'UNAUTHENTICATED',
    body: { query: '{ pets(limit: 5) { id name } }' },
    headers: { authorization: '' },
  },
  {
    name: 'a key the upstream refuses',
    code: 'UNAUTHENTICATED',
    body: { query: '{ pets(limit: 6) { id name } }' },
    headers: { authorization: 'Bearer not-a-known-key' },
  },
  {
    name: 'a cost over the limit, decided by the variables',
    code: 'COST_LIMIT_EXCEEDED',
    warm: {
      query:
        'query C($l: Int) { a: pets(limit: $l) { id name categoryId } b: pets(limit: $l) { id name categoryId } c: pets(limit: $l) { id name } d: pets(limit: $l) { id } e: pets(limit: $l) { id name categoryId } }',
      variables: { l: 1 },
    },
    body: {
      query:
        'query C($l: Int) { a: pets(limit: $l) { id name categoryId } b: pets(limit: $l) { id name categoryId } c: pets(limit: $l) { id name } d: pets(limit: $l) { id } e: pets(limit: $l) { id name categoryId } }',
      variables: { l: 100 },
    },
  },
  {
    name: 'a lone surrogate in createPet input.name (refused, nothing sent)',
    code: 'BAD_USER_INPUT',
    body: {
      query: 'mutation Odd($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Rex\ud800', categoryId: '1' } },
    },
    warm: {
      query: 'mutation Odd($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Warm', categoryId: '1' } },
    },
  },
  {
    name: 'a blank createPet input.name (refused with its argument, nothing sent)',
    code: 'BAD_USER_INPUT',
    body: {
      query: 'mutation Blank($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: '   ', categoryId: '1' } },
    },
    warm: {
      query: 'mutation Blank($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Warm', categoryId: '1' } },
    },
  },
  {
    name: 'a createPet input.name past NAME_MAX_LENGTH (refused with its argument, nothing sent)',
    code: 'BAD_USER_INPUT',
    body: {
      query: 'mutation Long($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'n'.repeat(201), categoryId: '1' } },
    },
    warm: {
      query: 'mutation Long($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Warm', categoryId: '1' } },
    },
  },
  {
    name: 'name missing from a createPet variable (400, argument input.name)',
    code: 'BAD_USER_INPUT',
    body: {
      query: 'mutation NoName($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { categoryId: '1' } },
    },
    warm: {
      query: 'mutation NoName($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Warm', categoryId: '1' } },
    },
  },
  {
    name: 'a createPet the upstream refuses, sent once',
    code: 'PET_EXISTS',
    body: {
      query: 'mutation Again($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Rex', categoryId: '1' } },
    },
    setup: () =>
      upstream.fault(
        /^\/v1\/pets$/,
        (_req, res) => {
          res.writeHead(409, { 'content-type': 'application/json' });
          res.end('{"code":"PET_EXISTS","message":"Rex is already here.","status":409}');
        },
        1,
      ),
  },
  {
    name: 'an operation name the document does not hold (never prepared)',
    code: 'OPERATION_RESOLUTION_FAILURE',
    warm: { query: 'query One { pets(limit: 1) { id } }', operationName: 'One' },
    body: { query: 'query One { pets(limit: 1) { id } }', operationName: 'Two' },
    yogaOnly: true,
  },
  {
    name: 'an APQ hash alone, registered before',
    register: { query: APQ_LIST, variables: { limit: 1 }, extensions: persistedQuery(sha256(APQ_LIST)) },
    body: { variables: { limit: 3 }, extensions: persistedQuery(sha256(APQ_LIST)) },
  },
  {
    name: 'an APQ hash alone, with Apollo Client 4’s clientLibrary extension',
    register: { query: APQ_LIST, extensions: persistedQuery(sha256(APQ_LIST)) },
    body: {
      operationName: 'ApqList',
      variables: { limit: 2 },
      extensions: {
        ...persistedQuery(sha256(APQ_LIST)),
        clientLibrary: { name: '@apollo/client', version: '4.3.8' },
      },
    },
  },
  {
    name: 'an APQ mutation by hash (no-store), sent once',
    register: { query: APQ_ADD, variables: { name: 'Reg' }, extensions: persistedQuery(sha256(APQ_ADD)) },
    body: { variables: { name: 'Hashed' }, extensions: persistedQuery(sha256(APQ_ADD)) },
  },
  {
    name: 'a manifest document by its bare hash (extensions.persistedQuery)',
    body: { extensions: persistedQuery('lanes-list') },
  },
  {
    name: 'an APQ hash whose document then meets an upstream 404',
    code: 'PET_NOT_FOUND',
    register: { query: APQ_PET, variables: { id: '2' }, extensions: persistedQuery(sha256(APQ_PET)) },
    warm: { variables: { id: '2' }, extensions: persistedQuery(sha256(APQ_PET)) },
    body: { variables: { id: '404' }, extensions: persistedQuery(sha256(APQ_PET)) },
  },
  {
    name: 'an unknown APQ hash (PersistedQueryNotFound)',
    code: 'PERSISTED_QUERY_NOT_FOUND',
    body: { extensions: persistedQuery(sha256('{ never { registered } }')) },
    yogaOnly: true,
  },
  {
    name: 'an APQ hash beside text it is not the SHA-256 of',
    code: 'PERSISTED_QUERY_HASH_MISMATCH',
    body: { query: '{ pets(limit: 1) { id } }', extensions: persistedQuery(sha256('{ other }')) },
    yogaOnly: true,
  },
  {
    name: 'GET: a query by its text',
    method: 'GET',
    body: { query: 'query Got($limit: Int) { pets(limit: $limit) { id name } }', variables: { limit: 3 } },
  },
  {
    name: 'GET: an APQ hash alone (useGETForHashedQueries, urql)',
    method: 'GET',
    register: { query: APQ_LIST, extensions: persistedQuery(sha256(APQ_LIST)) },
    body: { variables: { limit: 4 }, extensions: persistedQuery(sha256(APQ_LIST)) },
  },
  {
    name: 'GET: a persisted documentId, with Accept-Encoding and an Origin',
    method: 'GET',
    body: { documentId: DOCUMENT_ID },
    headers: { 'accept-encoding': 'gzip', origin: 'https://app.example' },
  },
  {
    name: 'GET: a query whose result has an error (executed once, answered by Yoga)',
    method: 'GET',
    code: 'PET_NOT_FOUND',
    warm: { query: 'query GotPet($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query GotPet($id: ID!) { pet(id: $id) { id } }', variables: { id: '404' } },
  },
  {
    name: 'GET: a mutation prepared over POST, sent by hash over GET (405, never run)',
    method: 'GET',
    code: 'BAD_REQUEST',
    register: { query: APQ_ADD, variables: { name: 'ByPost' }, extensions: persistedQuery(sha256(APQ_ADD)) },
    body: { variables: { name: 'ByGet' }, extensions: persistedQuery(sha256(APQ_ADD)) },
    yogaOnly: true,
  },
  {
    name: 'extensions in the body (Yoga reads them)',
    body: { query: '{ pets(limit: 1) { name } }', extensions: { anything: true } },
    yogaOnly: true,
  },
];

interface Answer {
  status: number;
  body: string;
  /** The body decompressed. */
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

async function send(
  target: Side,
  body: Body,
  extra: Record<string, string> = {},
  method: 'GET' | 'POST' = 'POST',
): Promise<Answer> {
  const headers: Record<string, string> = {
    ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    authorization: AUTH,
    'x-request-id': 'lanes-1',
    ...extra,
  };
  if (headers.authorization === '') delete headers.authorization;
  // Over GET the parameters go in the query string, JSON ones as JSON (GraphQL over HTTP).
  const search = new URLSearchParams(
    Object.entries(Array.isArray(body) ? {} : body).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : JSON.stringify(value),
    ]),
  );
  const response = await request(method === 'GET' ? `${target.gateway.url}?${search}` : target.gateway.url, {
    method,
    headers,
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
  });
  const { date: _date, ...rest } = response.headers;
  const raw = Buffer.from(await response.body.arrayBuffer());
  const encoding = rest['content-encoding'];
  // Compressed answers are compared as bytes, and read decompressed.
  const decoded = encoding === 'gzip' ? gunzipSync(raw) : encoding === 'br' ? brotliDecompressSync(raw) : raw;
  return {
    status: response.statusCode,
    body: encoding ? raw.toString('base64') : raw.toString(),
    text: decoded.toString(),
    headers: rest,
  };
}

function operationLines(logs: string[]) {
  return logs
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === 'operation' || line.msg === 'deprecated field used')
    .map(({ time: _t, durationMs: _d, pid: _p, hostname: _h, ...rest }) => rest);
}

describe('the fast lane answers exactly as Yoga does', () => {
  it.each(cases)('$name', async (c) => {
    const sides = [yoga, compiled, fast];
    if (c.register) for (const target of sides) await send(target, c.register, c.headers);
    for (let run = 0; run < 3; run++) {
      for (const target of sides) await send(target, c.warm ?? c.body, c.headers, c.method);
    }
    for (const target of sides) target.logs.length = 0;
    const lanes = fast.gateway.lanes;
    if (!lanes) throw new Error('the fast lane is off');
    const servedBefore = { ...lanes.served };
    const compiledBefore = { ...(compiled.gateway.lanes?.served ?? lanes.served) };

    const answers: Answer[] = [];
    const calls: string[][] = [];
    for (const target of sides) {
      upstream.clearFaults();
      upstream.requests.length = 0;
      c.setup?.();
      answers.push(await send(target, c.body, c.headers, c.method));
      calls.push(upstream.requests.map((r) => `${r.method} ${r.path} ${r.body}`));
    }
    const [viaYoga, viaCompiled, viaFast] = answers as [Answer, Answer, Answer];

    expect(viaCompiled).toEqual(viaYoga);
    expect(viaFast).toEqual(viaYoga);
    expect(calls[1]).toEqual(calls[0]);
    expect(calls[2]).toEqual(calls[0]);
    expect(operationLines(compiled.logs)).toEqual(operationLines(yoga.logs));
    expect(operationLines(fast.logs)).toEqual(operationLines(yoga.logs));
    expect(operationLines(fast.logs).length).toBeGreaterThan(0);
    // An answer in parts is compared as bytes above; its first error is read from JSON answers.
    if (String(viaYoga.headers['content-type']).includes('json')) {
      const answered = JSON.parse(viaYoga.text) as
        | { errors?: Array<{ extensions?: { code?: string } }> }
        | Array<{ errors?: Array<{ extensions?: { code?: string } }> }>;
      const first = Array.isArray(answered) ? answered.find((entry) => entry.errors) : answered;
      expect(first?.errors?.[0]?.extensions?.code).toBe(c.code);
    } else expect(c.code).toBeUndefined();
    // Successes are the fast lane's own (a plan's, where one was compiled); everything else is
    // answered by Yoga.
    const success = c.code === undefined && !c.yogaOnly;
    expect(lanes.served.fast - servedBefore.fast).toBe(success ? 1 : 0);
    expect(lanes.served.planned - servedBefore.planned).toBe(success && !c.unplanned ? 1 : 0);
    expect((compiled.gateway.lanes?.served.fast ?? 0) - compiledBefore.fast).toBe(success ? 1 : 0);
    expect(compiled.gateway.lanes?.served.planned).toBe(0);
  });

  it('counted every operation in the same metric series on both sides', async () => {
    const series = async (metrics: Metrics) =>
      (await metrics.registry.getMetricsAsJSON())
        .filter((metric) =>
          [
            'pet_gateway_operations_total',
            'pet_gateway_errors_total',
            'pet_gateway_deprecated_field_use_total',
          ].includes(metric.name),
        )
        .map((metric) => ({ name: metric.name, values: metric.values }));
    const httpCounts = async (metrics: Metrics) =>
      (await metrics.registry.getMetricsAsJSON())
        .filter((metric) =>
          ['pet_gateway_http_request_duration_seconds', 'pet_gateway_operation_duration_seconds'].includes(
            metric.name,
          ),
        )
        .flatMap((metric) =>
          metric.values
            .filter((value) => (value as { metricName?: string }).metricName?.endsWith('_count'))
            .map((value) => ({ name: metric.name, labels: value.labels, value: value.value })),
        );
    const fromFast = await series(fast.metrics);
    expect(
      fromFast.find((metric) => metric.name === 'pet_gateway_operations_total')?.values.length,
    ).toBeGreaterThan(3);
    expect(fromFast).toEqual(await series(yoga.metrics));
    expect(await series(compiled.metrics)).toEqual(await series(yoga.metrics));
    expect(await httpCounts(fast.metrics)).toEqual(await httpCounts(yoga.metrics));
    expect(await httpCounts(compiled.metrics)).toEqual(await httpCounts(yoga.metrics));
    const planned = async (metrics: Metrics) =>
      (await metrics.registry.getSingleMetric('pet_gateway_planned_requests_total')?.get())?.values[0]?.value;
    expect(await planned(fast.metrics)).toBe(fast.gateway.lanes?.served.planned);
    expect(await planned(fast.metrics)).toBeGreaterThan(10);
    expect(await planned(compiled.metrics)).toBe(0);
  });

  it('leaves an answer Yoga sends in parts (SSE, multipart/mixed) to Yoga: the fast lane writes JSON', async () => {
    // Clients of graphql-sse ask for every operation as SSE, a plain query included.
    for (const accept of ['text/event-stream', 'multipart/mixed']) {
      const body = { query: '{ pets(limit: 3) { id name } }' };
      let last: Answer[] = [];
      for (let run = 0; run < 4; run++) {
        last = [await send(yoga, body, { accept }), await send(fast, body, { accept })];
      }
      const [viaYoga, viaFast] = last as [Answer, Answer];
      expect(String(viaYoga.headers['content-type']), accept).toMatch(new RegExp(`^${accept}`));
      expect(viaFast, accept).toEqual(viaYoga);
    }
  });

  it('sends a new request id, as Yoga does, when the caller sends none', async () => {
    const body = { query: '{ pets(limit: 7) { id } }' };
    for (let run = 0; run < 3; run++) await send(fast, body);
    const before = fast.gateway.lanes?.served.fast ?? 0;
    const answer = await request(fast.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify(body),
    });
    await answer.body.text();
    expect(fast.gateway.lanes?.served.fast).toBe(before + 1);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('a rate limit holds in both lanes, one point per request', () => {
  let limitedYoga: Side;
  let limitedFast: Side;
  const limits = [createRateLimit({ perMinute: 5 }), createRateLimit({ perMinute: 5 })];

  beforeAll(async () => {
    limitedYoga = await side(false, limits[0]);
    limitedFast = await side(true, limits[1]);
  });

  afterAll(async () => {
    await limitedYoga.gateway.close();
    await limitedFast.gateway.close();
    for (const limit of limits) await limit.close();
  });

  it('answers the same 429, and counts a request the fast lane hands to Yoga once', async () => {
    const found = { query: 'query Limited($id: ID!) { pet(id: $id) { id name } }', variables: { id: '2' } };
    const missing = { ...found, variables: { id: '404' } };
    // The fourth is executed by the fast lane and answered by Yoga (it has an error): were it
    // counted by both, the fifth would be refused.
    const statuses: number[] = [];
    for (const body of [found, found, found, missing, found, found]) {
      const viaYoga = await send(limitedYoga, body);
      const viaFast = await send(limitedFast, body);
      // Both minutes opened within a millisecond of each other: Retry-After may round apart.
      const seconds = (answer: Answer) => Number(answer.headers['retry-after'] ?? 0);
      expect(Math.abs(seconds(viaFast) - seconds(viaYoga))).toBeLessThanOrEqual(1);
      const same = (answer: Answer) =>
        JSON.parse(JSON.stringify(answer).replaceAll(/(retry-after":"|retryAfter\\":|retry in )\d+/g, '$1N'));
      expect(same(viaFast)).toEqual(same(viaYoga));
      statuses.push(viaYoga.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(limits.map((limit) => limit.stats.limited)).toEqual([1, 1]);
    expect(limitedFast.gateway.lanes?.served.fast).toBeGreaterThan(0);
  });
});

describe('a rate limit holds in both lanes for a batch, one point per entry', () => {
  let limitedYoga: Side;
  let limitedFast: Side;
  const limits = [createRateLimit({ perMinute: 7 }), createRateLimit({ perMinute: 7 })];

  beforeAll(async () => {
    limitedYoga = await side(false, limits[0]);
    limitedFast = await side(true, limits[1]);
  });

  afterAll(async () => {
    await limitedYoga.gateway.close();
    await limitedFast.gateway.close();
    for (const limit of limits) await limit.close();
  });

  it('refuses the entries past the limit alike, counting each entry once though the fast lane hands the batch over', async () => {
    const batch = [
      { query: '{ pets(limit: 6) { id } }' },
      { query: 'query Other { pets(limit: 7) { name } }' },
    ];
    const codes: string[][] = [];
    const before = limitedFast.gateway.lanes?.served.fast ?? 0;
    // 2 + 2 + 2 points, then the fourth batch's first entry takes the seventh and its second is refused.
    for (let round = 0; round < 4; round++) {
      const viaYoga = await send(limitedYoga, batch);
      const viaFast = await send(limitedFast, batch);
      const same = (answer: Answer) =>
        JSON.parse(JSON.stringify(answer).replaceAll(/(retry-after":"|retryAfter\\":|retry in )\d+/g, '$1N'));
      expect(same(viaFast)).toEqual(same(viaYoga));
      codes.push(
        (JSON.parse(viaYoga.text) as Array<{ errors?: Array<{ extensions: { code: string } }> }>).map(
          (entry) => entry.errors?.[0]?.extensions.code ?? 'ok',
        ),
      );
    }
    expect(codes).toEqual([
      ['ok', 'ok'],
      ['ok', 'ok'],
      ['ok', 'ok'],
      ['ok', 'RATE_LIMITED'],
    ]);
    expect(limits.map((limit) => limit.stats.limited)).toEqual([1, 1]);
    // Yoga ran the first two (an operation is compiled, then prepared, on its second run); the
    // third was the fast lane's own; the fourth it handed over with its decisions.
    expect((limitedFast.gateway.lanes?.served.fast ?? 0) - before).toBe(1);
  });
});

describe('caching headers are the same in both lanes', () => {
  let cachedYoga: Side;
  let cachedFast: Side;
  const ttlMs = 3000;

  beforeAll(async () => {
    cachedYoga = await side(false, undefined, { store: createMemoryCache(), ttlMs });
    cachedFast = await side(true, undefined, { store: createMemoryCache(), ttlMs });
  });

  afterAll(async () => {
    await cachedYoga.gateway.close();
    await cachedFast.gateway.close();
  });

  it.each([
    ['a query with the response cache on', { query: '{ pets(limit: 2) { id } }' }, 'private, max-age=3'],
    [
      'a query by APQ hash',
      { extensions: persistedQuery(sha256(APQ_LIST)), variables: { limit: 2 } },
      'private, max-age=3',
    ],
    [
      'a mutation',
      { query: 'mutation { createPet(input: { name: "Cc", categoryId: "1" }) { name } }' },
      'no-store',
    ],
  ])('%s: %s', async (_name, body, cacheControl) => {
    const register = { query: APQ_LIST, extensions: persistedQuery(sha256(APQ_LIST)) };
    await send(cachedYoga, register);
    await send(cachedFast, register);
    for (let run = 0; run < 3; run++) await send(cachedFast, body);
    const before = cachedFast.gateway.lanes?.served.fast ?? 0;
    const viaYoga = await send(cachedYoga, body);
    const viaFast = await send(cachedFast, body);
    expect(cachedFast.gateway.lanes?.served.fast).toBe(before + 1);
    expect(viaFast.headers['cache-control']).toBe(cacheControl);
    expect(viaYoga.headers['cache-control']).toBe(cacheControl);
    expect(viaFast.headers.vary).toBe('Accept, Accept-Encoding, Authorization, Origin');
    expect(viaFast.headers).toEqual(viaYoga.headers);
  });
});
