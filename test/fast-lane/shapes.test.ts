// @tier integration

import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { type FakeUpstream, seedPets, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';

// A document sent as text for the first time, of a shape the fast lane has prepared (the same
// document but for what its aliases are called, its spacing and comments), is served by the fast
// lane under its own names, byte for byte what Yoga answers. Held here against a gateway with the
// fast lane off; the lanes' differential corpus (lanes.test.ts) also sends each case renamed.

const TOKEN = 'shapes-token';
const AUTH = `Bearer ${TOKEN}`;
const MANIFEST_ID = 'sha256:shapes-list';
const MANIFEST_DOCUMENT = '{ listed: pets(limit: 2) { id name } }';

interface Side {
  gateway: RunningGateway;
  logs: string[];
}

let upstream: FakeUpstream;
let yoga: Side;
let fast: Side;
let required: Side;

async function side(fastLane: boolean, mode: 'allow' | 'require' = 'allow'): Promise<Side> {
  const logs: string[] = [];
  const gateway = await startGateway({
    upstreamUrl: upstream.url,
    timeoutMs: 400,
    client: { maxRetries: 0 },
    gateway: {
      fastLane,
      logger: createLogger('info', { write: (line: string) => void logs.push(line) }),
      persistedOperations: { mode, documents: new Map([[MANIFEST_ID, MANIFEST_DOCUMENT]]) },
    },
  });
  return { gateway, logs };
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(TOKEN);
  seedPets(upstream, TOKEN);
  yoga = await side(false);
  fast = await side(true);
  required = await side(true, 'require');
});

afterAll(async () => {
  for (const { gateway } of [yoga, fast, required]) await gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
});

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

async function send(target: Side, body: unknown): Promise<Answer> {
  const response = await request(target.gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTH, 'x-request-id': 'shapes-1' },
    body: JSON.stringify(body),
  });
  const { date: _date, ...headers } = response.headers;
  return { status: response.statusCode, body: await response.body.text(), headers };
}

const served = (target: Side) => ({ ...(target.gateway.lanes?.served ?? { fast: 0, yoga: 0, planned: 0 }) });

function operationLines(logs: string[]) {
  return logs
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === 'operation' || line.msg === 'deprecated field used')
    .map(({ time: _t, durationMs: _d, pid: _p, hostname: _h, ...rest }) => rest);
}

/**
 * Prepares `warm` on the fast side (sent until Yoga has prepared it), then sends `body` to both
 * sides: the answers, the upstream calls and the log lines must be the same; returns what the
 * fast side's lanes counted for `body`.
 */
async function compare(warm: unknown, body: unknown) {
  for (let run = 0; run < 2; run++) await send(fast, warm);
  for (const target of [yoga, fast]) target.logs.length = 0;
  const before = served(fast);
  const answers: Answer[] = [];
  const calls: string[][] = [];
  for (const target of [yoga, fast]) {
    upstream.requests.length = 0;
    answers.push(await send(target, body));
    calls.push(upstream.requests.map((r) => `${r.method} ${r.path} ${r.body}`));
  }
  expect(answers[1]).toEqual(answers[0]);
  expect(calls[1]).toEqual(calls[0]);
  expect(operationLines(fast.logs)).toEqual(operationLines(yoga.logs));
  const after = served(fast);
  return {
    answer: answers[1] as Answer,
    calls: calls[1] as string[],
    fast: after.fast - before.fast,
    planned: after.planned - before.planned,
    yoga: after.yoga - before.yoga,
  };
}

describe('a new text of a prepared shape', () => {
  it('is served by the fast lane under its own aliases', async () => {
    const {
      answer,
      fast: byFast,
      planned,
    } = await compare(
      {
        query:
          'query Sold { a: pets(status: SOLD, limit: 2) { __typename x: id } b: pets(limit: 1) { name } }',
      },
      {
        query:
          'query Sold { first: pets(status: SOLD, limit: 2) { __typename key: id } second: pets(limit: 1) { name } }',
      },
    );
    expect(byFast).toBe(1);
    expect(planned).toBe(1);
    expect(Object.keys(JSON.parse(answer.body).data)).toEqual(['first', 'second']);
    expect(JSON.parse(answer.body).data.first[0]).toHaveProperty('key');
  });

  it('is served whatever its spacing and comments', async () => {
    const { fast: byFast } = await compare(
      { query: '{ spaced: pets(limit: 3) { id name } }' },
      { query: '# a comment\n{\n  spaced : pets( limit : 3 ) {\n    id\n    name # and another\n  }\n}\n' },
    );
    expect(byFast).toBe(1);
  });

  it('keeps names that two fields share, and an alias that names another field', async () => {
    const { answer, fast: byFast } = await compare(
      {
        query:
          '{ a: pets(limit: 2) { id } b: pets(limit: 2) { id name } a: pets(limit: 2) { name: status } }',
      },
      {
        query:
          '{ p: pets(limit: 2) { id } q: pets(limit: 2) { id name } p: pets(limit: 2) { name: status } }',
      },
    );
    expect(byFast).toBe(1);
    expect(Object.keys(JSON.parse(answer.body).data)).toEqual(['p', 'q']);
  });

  it('runs a mutation once, under its own alias', async () => {
    const mutation = (alias: string, name: string) => ({
      query: `mutation Add($input: NewPetInput!) { ${alias}: createPet(input: $input) { name categoryId } }`,
      variables: { input: { name, categoryId: '3' } },
    });
    const { calls, fast: byFast } = await compare(mutation('made', 'Warm'), mutation('added', 'Shape'));
    expect(byFast).toBe(1);
    expect(calls.filter((call) => call.startsWith('POST '))).toHaveLength(1);
  });

  it('steps aside for Yoga on an upstream failure, on the same calls: nothing is sent twice', async () => {
    const {
      answer,
      calls,
      fast: byFast,
      yoga: byYoga,
    } = await compare(
      {
        query: 'query M($id: ID!) { list: pets(limit: 2) { id } one: pet(id: $id) { name } }',
        variables: { id: '2' },
      },
      {
        query: 'query M($id: ID!) { all: pets(limit: 2) { id } it: pet(id: $id) { name } }',
        variables: { id: '404' },
      },
    );
    expect(byFast).toBe(0);
    expect(byYoga).toBe(1);
    expect(JSON.parse(answer.body).errors[0].extensions.code).toBe('PET_NOT_FOUND');
    expect(JSON.parse(answer.body).errors[0].path).toEqual(['it']);
    expect(calls).toHaveLength(2);
  });

  it('steps aside for a create the upstream refuses, sent once', async () => {
    const mutation = (alias: string, name: string) => ({
      query: `mutation Again($input: NewPetInput!) { ${alias}: createPet(input: $input) { name } }`,
      variables: { input: { name, categoryId: '1' } },
    });
    await compare(mutation('warm', 'Warm'), mutation('warm', 'Warm2'));
    const refuse = () =>
      upstream.fault(
        /^\/v1\/pets$/,
        (_req, res) => {
          res.writeHead(409, { 'content-type': 'application/json' });
          res.end('{"code":"PET_EXISTS","message":"Rex is already here.","status":409}');
        },
        1,
      );
    // Each side meets the refusal once.
    for (const target of [yoga, fast]) {
      upstream.requests.length = 0;
      refuse();
      const before = served(fast);
      const answer = await send(target, mutation('again', 'Rex'));
      expect(JSON.parse(answer.body).errors[0].extensions.code).toBe('PET_EXISTS');
      expect(upstream.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
      if (target === fast) expect(served(fast).fast - before.fast).toBe(0);
    }
  });
});

describe('a batch of new texts of prepared shapes', () => {
  // pets only: an entry with a deprecated field (pet(id)) hands its batch to Yoga, which words the notice.
  const entry = (all: string, sold: string, limit: number) => ({
    query: `query Both { ${all}: pets(limit: ${limit}) { id } ${sold}: pets(status: SOLD, limit: 2) { name } }`,
  });
  const warm = (limit: number) => [
    entry('all', 'sold', limit),
    { query: '{ few: pets(limit: 2) { name } }' },
  ];

  it("is served by the fast lane, each entry under its own aliases, in Yoga's bytes and lines", async () => {
    const renamed = [entry('every', 'gone', 3), { query: '{ some: pets(limit: 2) { name } }' }];
    const { answer, fast: byFast, yoga: byYoga } = await compare(warm(3), renamed);
    expect(byFast).toBe(1);
    expect(byYoga).toBe(0);
    const [first, second] = JSON.parse(answer.body);
    expect(Object.keys(first.data)).toEqual(['every', 'gone']);
    expect(Object.keys(second.data)).toEqual(['some']);
  });

  it('is handed whole to Yoga when one entry steps aside, on the same calls: nothing is sent twice', async () => {
    await compare(warm(4), warm(4));
    const failing = [entry('every', 'gone', 4), { query: '{ other: pets(limit: 2) { name } }' }];
    const answers: Answer[] = [];
    const calls: number[] = [];
    for (const target of [yoga, fast]) {
      upstream.requests.length = 0;
      upstream.fault(
        /limit=4/,
        (_req, res) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"code":"INTERNAL","message":"Down.","status":500}');
        },
        1,
      );
      const before = served(fast);
      answers.push(await send(target, failing));
      calls.push(upstream.requests.length);
      if (target === fast) expect(served(fast).yoga - before.yoga).toBe(1);
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(calls[1]).toBe(calls[0]);
    expect(JSON.parse(answers[1]?.body ?? '[]')[0].errors[0].path).toEqual(['every']);
  });
});

describe('a document seen once', () => {
  it('costs no plan: its shape is planned when a second document of it runs, and the third is served', async () => {
    const counter = (n: number) => ({ query: `{ once_${n}: pets(limit: 9) { id name } }` });
    const byLane: string[] = [];
    for (let n = 1; n <= 4; n++) {
      const before = served(fast);
      const [viaYoga, viaFast] = [await send(yoga, counter(n)), await send(fast, counter(n))];
      expect(viaFast).toEqual(viaYoga);
      byLane.push(served(fast).fast > before.fast ? 'fast' : 'yoga');
    }
    expect(byLane).toEqual(['yoga', 'yoga', 'fast', 'fast']);
  });
});

describe('what a shape does not stand for', () => {
  it('another argument value is another shape: Yoga answers it and prepares it', async () => {
    const { fast: byFast, yoga: byYoga } = await compare(
      { query: '{ few: pets(limit: 4) { id } }' },
      { query: '{ few: pets(limit: 5) { id } }' },
    );
    expect(byFast).toBe(0);
    expect(byYoga).toBe(1);
  });

  it('an alias where the prepared document has none is another shape', async () => {
    const { fast: byFast } = await compare(
      { query: '{ pets(limit: 6) { id } }' },
      { query: '{ pets: pets(limit: 6) { id } }' },
    );
    expect(byFast).toBe(0);
  });

  it('another operation name asked for is another key', async () => {
    const { fast: byFast } = await compare(
      { query: 'query Named { n: pets(limit: 7) { id } }', operationName: 'Named' },
      { query: 'query Named { m: pets(limit: 7) { id } }' },
    );
    expect(byFast).toBe(0);
  });

  it('an alias __proto__ is never written into an answer object by the fast lane', async () => {
    const { answer, fast: byFast } = await compare(
      { query: '{ safe: pets(limit: 8) { id } }' },
      { query: '{ __proto__: pets(limit: 8) { id } }' },
    );
    expect(byFast).toBe(0);
    expect(JSON.parse(answer.body).data).toHaveProperty('__proto__');
  });

  it('with trusted documents required, no text stands for a manifest document of its shape', async () => {
    for (let run = 0; run < 3; run++)
      expect((await send(required, { documentId: MANIFEST_ID })).status).toBe(200);
    const before = served(required);
    const renamed = await send(required, { query: '{ other: pets(limit: 2) { id name } }' });
    expect(renamed.status).not.toBe(200);
    expect(JSON.parse(renamed.body).errors[0].extensions.code).toBe('PERSISTED_OPERATION_REQUIRED');
    expect(served(required).fast).toBe(before.fast);
    expect(required.gateway.lanes?.shapes).toBeUndefined();
  });
});
