// @tier integration

import type { ClientRequest } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import type { FakeUpstream, HeldRequest } from '../support/fake-upstream.ts';
import { useGateway } from '../support/fixture.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { postOnOwnConnection } from '../support/graphql.ts';

// A client that hangs up mid-request: the upstream calls made for it must be cancelled at once, in
// both lanes and mid-stream, and that must not look like an upstream failure. The fake upstream
// holds the calls open far longer than the test waits (HOLD_MS) under a deadline longer still
// (TIMEOUT_MS), so only the client's leaving can end them within the second allowed.

const TOKEN = 'abandoned-requests-token';
const HOLD_MS = 6000;
const TIMEOUT_MS = 9000;
/** From the client's leaving to the upstream seeing its call's connection closed. */
const ABORT_WITHIN_MS = 1000;

const lines: Array<Record<string, unknown>> = [];
let upstream: FakeUpstream;
let gateway: RunningGateway;

useGateway(
  {
    tokens: [TOKEN],
    seed: (fake) => fake.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '1', status: 'available' }),
    gateway: {
      timeoutMs: TIMEOUT_MS,
      // One failure would open it: a cancelled call counted as one would fail the next request fast.
      client: { breaker: { failureThreshold: 1, openMs: 60_000 } },
      gateway: {
        logger: createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) }),
      },
    },
  },
  (started) => ({ upstream, gateway } = started),
);

interface Sent {
  req: ClientRequest;
  /** Resolves with the status and the body so far once the body holds the first `"data"`. */
  firstPart: Promise<{ status: number; text: string }>;
}

/** A POST to /graphql over its own connection, whose socket the test may destroy at any point. */
function send(body: unknown, accept = 'application/json'): Sent {
  const req = postOnOwnConnection(gateway.url, body, { accept, authorization: `Bearer ${TOKEN}` });
  const firstPart = new Promise<{ status: number; text: string }>((resolve) => {
    req.on('response', (res) => {
      res.on('error', () => {});
      let received = '';
      res.on('data', (chunk: Buffer) => {
        received += chunk;
        if (received.includes('"data"')) resolve({ status: res.statusCode ?? 0, text: received });
      });
    });
  });
  return { req, firstPart };
}

/** A whole answer, read to its end. */
function answer(body: unknown): Promise<{ status: number; text: string }> {
  const { req } = send(body);
  return new Promise((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
  });
}

const waitFor = <T>(check: () => T, timeout = 3000) => vi.waitFor(check, { timeout, interval: 5 });

/** The client hangs up once the upstream holds `count` calls; how long until each was aborted. */
async function leaveAndTime(sent: Sent, held: HeldRequest[], count = 1): Promise<number[]> {
  await waitFor(() => expect(held).toHaveLength(count));
  const left = performance.now();
  sent.req.destroy();
  await waitFor(() => {
    for (const call of held) expect(call.abortedAt).toBeDefined();
  });
  return held.map((call) => (call.abortedAt as number) - left);
}

/** Nothing an operator would read as trouble: no warning or error line, no breaker change. */
function expectQuietLog(): void {
  const loud = lines.filter((line) => (line.level as number) >= 40);
  expect(loud).toEqual([]);
}

/** The operation line of the abandoned request says the client went away. */
async function expectClientGoneLine(operationName: string): Promise<void> {
  await waitFor(() =>
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'operation', operationName, outcome: 'client_gone', status: 499 }),
    ),
  );
}

/** The breaker is closed: the next request reaches the upstream and is answered. */
async function expectUpstreamStillUsed(): Promise<void> {
  upstream.clearFaults();
  const before = upstream.requests.length;
  const { status, text } = await answer({ query: '{ pets(limit: 1) { name } }' });
  expect(status).toBe(200);
  expect(JSON.parse(text)).toEqual({ data: { pets: [{ name: 'Rex' }] } });
  expect(upstream.requests.length).toBe(before + 1);
}

describe('a client that leaves mid-request', () => {
  it('through the fast lane: its GET is aborted upstream within a second', async () => {
    const query = { query: 'query FastPets { pets(limit: 5) { id name } }' };
    // Yoga answers it once and prepares it; from then on the fast lane serves it.
    for (let i = 0; i < 2; i++) expect((await answer(query)).status).toBe(200);
    const lanes = gateway.lanes as NonNullable<RunningGateway['lanes']>;
    const served = { ...lanes.served };
    lines.length = 0;
    const held = upstream.hold(/^\/v1\/pets\?/, HOLD_MS);
    const [aborted] = await leaveAndTime(send(query), held);
    expect(aborted).toBeLessThan(ABORT_WITHIN_MS);
    await expectClientGoneLine('FastPets');
    // The fast lane ran it and gave nothing to Yoga: nobody is left to answer.
    expect(lanes.served.yoga).toBe(served.yoga);
    expectQuietLog();
    await expectUpstreamStillUsed();
  });

  it("through Yoga's lane (a document not prepared): its GET is aborted upstream within a second", async () => {
    const lanes = gateway.lanes as NonNullable<RunningGateway['lanes']>;
    const yogaBefore = lanes.served.yoga;
    lines.length = 0;
    const held = upstream.hold(/^\/v1\/pets\?/, HOLD_MS);
    const [aborted] = await leaveAndTime(send({ query: 'query YogaPets { pets(limit: 3) { id } }' }), held);
    expect(lanes.served.yoga).toBe(yogaBefore + 1);
    expect(aborted).toBeLessThan(ABORT_WITHIN_MS);
    await expectClientGoneLine('YogaPets');
    expectQuietLog();
    await expectUpstreamStillUsed();
  });

  // Each its own list (limit), so that neither can join a call the other left in flight.
  it.each([
    ['multipart/mixed', 'DeferredMultipart', 4],
    ['text/event-stream', 'DeferredSse', 6],
  ])(
    'with @defer answered as %s: the deferred GET is aborted once the client leaves mid-stream',
    async (accept, name, limit) => {
      lines.length = 0;
      const held = upstream.hold(/^\/v1\/pets\?/, HOLD_MS);
      const sent = send(
        { query: `query ${name} { __typename ... @defer { pets(limit: ${limit}) { id } } }` },
        accept,
      );
      // The first part is out before the client leaves: the stream is under way.
      const first = await sent.firstPart;
      expect(first.status).toBe(200);
      expect(first.text).toContain('__typename');
      const [aborted] = await leaveAndTime(sent, held);
      expect(aborted).toBeLessThan(ABORT_WITHIN_MS);
      expectQuietLog();
      await expectUpstreamStillUsed();
    },
  );

  it('cancels a GET shared by two requests only once both clients have left', async () => {
    const query = { query: 'query SharedPets { pets(limit: 2) { id } }' };
    lines.length = 0;
    const held = upstream.hold(/^\/v1\/pets\?/, HOLD_MS);
    const first = send(query);
    const second = send(query);
    await waitFor(() => expect(held).toHaveLength(1));
    // Let the second join the call in flight (one GET for both: the caller's GETs are shared).
    await new Promise((resolve) => setTimeout(resolve, 100));
    first.req.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(held[0]?.abortedAt).toBeUndefined();
    const [aborted] = await leaveAndTime(second, held);
    expect(aborted).toBeLessThan(ABORT_WITHIN_MS);
    expect(upstream.requests.filter((call) => call.path.startsWith('/v1/pets?'))).toHaveLength(1);
    await waitFor(() =>
      expect(lines.filter((line) => line.operationName === 'SharedPets').map((line) => line.outcome)).toEqual(
        ['client_gone', 'client_gone'],
      ),
    );
    expectQuietLog();
  });

  it('lets a createPet already sent finish upstream, so the store holds no unknown pet', async () => {
    lines.length = 0;
    const held = upstream.hold(/^\/v1\/pets$/, 600);
    const sent = send({
      query: 'mutation LeftCreate { createPet(input: { name: "Orphan", categoryId: "1" }) { id } }',
    });
    await waitFor(() => expect(held).toHaveLength(1));
    sent.req.destroy();
    await waitFor(() => expect(held[0]?.answeredAt).toBeDefined());
    expect(held[0]?.abortedAt).toBeUndefined();
    await expectClientGoneLine('LeftCreate');
    expectQuietLog();
    upstream.clearFaults();
    const { text } = await answer({ query: '{ pets(limit: 10) { name } }' });
    expect(JSON.parse(text).data.pets.map((pet: { name: string }) => pet.name)).toContain('Orphan');
  });
});
