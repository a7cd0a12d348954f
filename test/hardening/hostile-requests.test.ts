// @tier integration

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { postJson } from '../support/graphql.ts';
import { documentedCodes, errorsOf, LEAK } from './codes.ts';
import { CORPUS_AUTH, CORPUS_TOKEN, type HostileCase, hostileCorpus } from './corpus.ts';
import { percentile, send } from './send.ts';

const corpus = hostileCorpus();
const codes = documentedCodes();
const latencies: number[] = [];
const slowest: Array<{ name: string; ms: number }> = [];
let upstream: FakeUpstream;
let gateway: RunningGateway;
/** Upstream requests made while the corpus ran, over all cases. */
let reachedUpstream = 0;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(CORPUS_TOKEN);
  upstream.seed(CORPUS_TOKEN, { id: '1', name: 'Rex', categoryId: '1', status: 'available' });
  gateway = await startGateway({ upstreamUrl: upstream.url });
});

beforeEach(() => {
  reachedUpstream += upstream.requests.length;
  upstream.requests.length = 0;
});

afterAll(async () => {
  const perClass = new Map<string, number>();
  for (const c of corpus) perClass.set(c.class, (perClass.get(c.class) ?? 0) + 1);
  console.log(
    `hostile corpus: ${corpus.length} cases (${[...perClass].map(([k, n]) => `${k} ${n}`).join(', ')}); ` +
      `latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ` +
      `max ${Math.max(...latencies).toFixed(1)} ms (information only); slowest: ` +
      slowest
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 6)
        .map((c) => `${c.name} ${c.ms.toFixed(0)} ms`)
        .join('; '),
  );
  await gateway?.close();
  await upstream?.close();
});

/** Each case's first answer (its document interpreted), compared with later runs below. */
const firstAnswers = new Map<HostileCase, { status: number; text: string }>();

async function check(c: HostileCase): Promise<void> {
  const answer = await send(gateway.url, c.send);
  firstAnswers.set(c, { status: answer.status, text: answer.text });
  latencies.push(answer.ms);
  slowest.push({ name: `${c.class}: ${c.name}`.slice(0, 80), ms: answer.ms });
  expect(answer.status).toBeLessThan(500);
  expect(answer.contentType).toMatch(/^application\/(graphql-response\+)?json\b/);
  const errors = errorsOf(answer.text);
  expect(errors.length).toBeGreaterThan(0);
  expect(errors.map((error) => error.extensions?.code)).toEqual(errors.map(() => c.code));
  expect(answer.status).toBe(c.status);
  expect(codes.has(c.code), `${c.code} is in the README's error table`).toBe(true);
  expect(answer.text).not.toMatch(LEAK);
  expect(answer.text).not.toContain(CORPUS_TOKEN);
  expect(answer.text).not.toContain('Did you mean');
  if (c.secret) expect(answer.text).not.toContain(c.secret);
  expect(upstream.requests).toHaveLength(0);
}

describe('hostile requests', () => {
  it(`has at least 300 cases`, () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300);
  });

  for (const c of corpus) {
    // A case marked knownBug documents a bug outside this suite's files: it must keep failing
    // until that bug is fixed, then the mark goes.
    (c.knownBug ? it.fails : it)(`${c.class}: ${c.name}`, async () => {
      try {
        await check(c);
      } finally {
        // A known bug may let the request through: its upstream calls are its own failure.
        if (c.knownBug) upstream.requests.length = 0;
      }
    });
  }

  it('never reached the upstream', () => {
    expect(reachedUpstream).toBe(0);
  });

  it('answers every keep-alive case the same on its second and third run, when repeated documents run compiled', async () => {
    // Every case above ran once, its document interpreted; from a document's second run on it is
    // compiled (src/execution/compiled.ts). A hostile document must not get a different answer.
    const cases = corpus.filter(
      (c) => c.send.kind === 'fetch' && !c.knownBug && (c.send.body?.length ?? 0) < 100_000,
    );
    for (const c of cases) {
      const first = firstAnswers.get(c) ?? (await send(gateway.url, c.send));
      for (let run = 0; run < 2; run++) {
        const again = await send(gateway.url, c.send);
        expect({ case: c.name, status: again.status, text: again.text }).toEqual({
          case: c.name,
          status: first.status,
          text: first.text,
        });
      }
    }
    expect(upstream.requests).toHaveLength(0);
  }, 60_000);

  it('answers every keep-alive case as a gateway with FAST_LANE off does (Yoga for everything)', async () => {
    // The cases above went through the edge: the fast lane read each body and handed it to Yoga.
    // A gateway without the fast lane must give the same status and bytes.
    const reference = await startGateway({ upstreamUrl: upstream.url, gateway: { fastLane: false } });
    try {
      const cases = corpus.filter(
        (c) => c.send.kind === 'fetch' && !c.knownBug && (c.send.body?.length ?? 0) < 100_000,
      );
      expect(cases.length).toBeGreaterThan(300);
      for (const c of cases) {
        const viaEdge = firstAnswers.get(c) ?? (await send(gateway.url, c.send));
        const viaYoga = await send(reference.url, c.send);
        expect({ case: c.name, status: viaYoga.status, text: viaYoga.text }).toEqual({
          case: c.name,
          status: viaEdge.status,
          text: viaEdge.text,
        });
      }
    } finally {
      await reference.close();
    }
    expect(upstream.requests).toHaveLength(0);
  }, 60_000);

  it('is still up afterwards: an authorized query works', async () => {
    const result = await postJson<{ pets: Array<{ id: string; name: string }> }>(
      gateway.url,
      { query: '{ pets(limit: 5) { id name } }' },
      CORPUS_AUTH,
    );
    expect(result.status).toBe(200);
    expect(result.errors).toBeUndefined();
    expect(result.data?.pets).toEqual([{ id: '1', name: 'Rex' }]);
    expect(upstream.requests.map((r) => r.path)).toEqual(['/v1/pets?limit=5']);
  });
});
