// @tier integration

import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  type Answer,
  AUTH,
  type Body,
  countedSeries,
  DOCUMENT_ID,
  operationLines,
  type Side,
  send,
  TOKEN,
  useThreeSides,
} from './sides.ts';

// Conditional GETs, differentially: a GET answer a client may keep carries an ETag of its bytes,
// and the same GET with that tag in If-None-Match is 304 with no body, the same on every lane
// (Yoga alone, compiled, plans) and in the log line.

const sides = useThreeSides();
const all = (): [string, Side][] => [
  ['yoga', sides.yoga],
  ['compiled', sides.compiled],
  ['fast', sides.fast],
];
const LIST: Body = { query: '{ pets(limit: 2) { id name } }' };

/** Each side's answer to the same GET, after three warm-ups so the fast lanes serve it themselves. */
async function getOnAll(body: Body, extra: Record<string, string> = {}): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const [, side] of all()) {
    for (let run = 0; run < 3; run++) await send(side, body, {}, 'GET');
    answers.push(await send(side, body, extra, 'GET'));
  }
  return answers;
}

describe('ETag and 304 on GET, the same on every lane', () => {
  it('tags a query answer by its bytes, the same tag on every lane', async () => {
    const answers = await getOnAll(LIST);
    const tags = answers.map((answer) => answer.headers.etag);
    expect(tags[0]).toMatch(/^W\/"[\w-]{27}"$/);
    expect(new Set(tags).size).toBe(1);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
  });

  it('answers 304, no body, the 200 headers but those of the body, when If-None-Match names the tag', async () => {
    const [first] = await getOnAll(LIST);
    const etag = String(first?.headers.etag);
    const served = sides.fast.gateway.lanes?.served.fast ?? 0;
    const answers = await getOnAll(LIST, { 'if-none-match': `"other", ${etag}` });
    expect(sides.fast.gateway.lanes?.served.fast).toBeGreaterThan(served);
    for (const answer of answers) {
      expect(answer.status).toBe(304);
      expect(answer.body).toBe('');
      expect(answer.headers).toMatchObject({ etag, 'cache-control': 'private, no-cache' });
      expect(answer.headers['content-length']).toBeUndefined();
      expect(answer.headers['content-type']).toBeUndefined();
    }
    expect(answers[1]?.headers).toEqual(answers[0]?.headers);
    expect(answers[2]?.headers).toEqual(answers[0]?.headers);
    for (const [name, side] of all()) {
      const line = operationLines(side.logs).at(-1);
      expect(line?.status, name).toBe(304);
      const { timed } = await countedSeries(side.metrics);
      const http = timed.filter((one) => one.name === 'pet_gateway_http_request_duration_seconds');
      expect(
        http.some((one) => String(one.labels.statusCode) === '304'),
        `${name}: ${JSON.stringify(http.map((one) => one.labels))}`,
      ).toBe(true);
    }
  });

  it('answers 200 in full to a tag of other bytes, and the tag is the same under gzip', async () => {
    const stale = await getOnAll(LIST, { 'if-none-match': 'W/"not-this-answer"' });
    expect(stale.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const zipped = await getOnAll(LIST, { 'accept-encoding': 'gzip' });
    expect(zipped.map((answer) => answer.headers.etag)).toEqual(stale.map((answer) => answer.headers.etag));
  });

  it('tags a persisted document by id over GET too', async () => {
    const answers = await getOnAll({ documentId: DOCUMENT_ID });
    expect(answers.every((answer) => String(answer.headers.etag).startsWith('W/"'))).toBe(true);
  });

  it('tags no answer a client may not keep: an error, a POST', async () => {
    const refused = await getOnAll({ query: '{ pets(limit: 500) { id } }' });
    expect(refused.map((answer) => answer.headers.etag)).toEqual([undefined, undefined, undefined]);
    for (const [, side] of all()) {
      const posted = await send(side, LIST, { 'if-none-match': '*' });
      expect([posted.status, posted.headers.etag]).toEqual([200, undefined]);
    }
  });
});

/** Every byte a GET's answer takes on the wire (head and body), over a connection of its own. */
async function bytesOf(side: Side, search: string, headers: Record<string, string>): Promise<number> {
  const url = new URL(`${side.gateway.url}?${search}`);
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, 'connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  const socket = connect(Number(url.port), url.hostname);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  let total = 0;
  for await (const chunk of socket) total += (chunk as Buffer).length;
  return total;
}

describe('what a mobile client saves by asking again with its tag', () => {
  it('ten re-fetches of an unchanged list of 20 take a fraction of the bytes', async () => {
    // A full page of 20, as an app's list screen shows.
    for (let i = 0; i < 20; i++) {
      sides.upstream.seed(TOKEN, {
        id: String(9000 + i),
        name: `Pet number ${i}`,
        categoryId: '2',
        status: 'available',
      });
    }
    const search = new URLSearchParams({
      query: '{ pets(limit: 20) { id name categoryId status } }',
    }).toString();
    const auth = { authorization: AUTH, accept: 'application/graphql-response+json' };
    const first = await send(
      sides.fast,
      { query: '{ pets(limit: 20) { id name categoryId status } }' },
      {},
      'GET',
    );
    const etag = String(first.headers.etag);
    let full = 0;
    let revalidated = 0;
    for (let run = 0; run < 10; run++) {
      full += await bytesOf(sides.fast, search, auth);
      revalidated += await bytesOf(sides.fast, search, { ...auth, 'if-none-match': etag });
    }
    console.info(
      `ten re-fetches of pets(limit: 20): ${full} bytes in full, ${revalidated} with If-None-Match`,
    );
    expect(revalidated).toBeLessThan(full / 2);
  });
});
