import fc from 'fast-check';
import { afterAll, beforeAll, expect } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/client.ts';
import { createYogaServer, type YogaServer } from '../../src/yoga/server.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { documentedCodes, LEAK } from './codes.ts';

// What the property files share: a fixed seed (the same cases every run; a counterexample
// fast-check finds is kept in regressions.ts and replayed as a plain test), the gateway they ask
// in-process, and what every answer must be, whatever was asked.

export const SEED = 424242;
export const TOKEN = 'prop-token-3f9a61c4';
export const AUTH = `Bearer ${TOKEN}`;
/** Codes the fake upstream answers with (passed through verbatim, as documented). */
const UPSTREAM_CODES = [
  'UNAUTHENTICATED',
  'INVALID_LIMIT',
  'PET_NOT_FOUND',
  'INVALID_JSON',
  'INVALID_BODY',
  'NOT_FOUND',
];
const known = new Set([...documentedCodes(), ...UPSTREAM_CODES]);

export const authorization = fc.constantFrom<string | undefined>(
  AUTH,
  AUTH,
  AUTH,
  undefined,
  '',
  'Bearer nope',
  'Basic eDp5',
);

export const runs = (numRuns: number) => ({ seed: SEED, numRuns, endOnFailure: true });

// Each property runs a fixed number of cases (hundreds to thousands) on one core: up to 15 s alone,
// two or three times that beside the slow tier's neighbours. The limit guards against a hang, not
// speed: the cases are counted, so it never cuts a run short of its work.
export const MANY_CASES = { timeout: 90_000 };

export interface Reply {
  status: number;
  text: string;
}

/** A file's gateway, upstream and count of the cases it ran (see usePropertyGateway). */
export interface PropertyGateway {
  readonly upstream: FakeUpstream;
  /** Cases the running property has checked; each test starts it at 0 and checks its own count. */
  cases: number;
  /** Adds the property's cases and upstream calls to the file's totals, printed at its end. */
  counted(): void;
  /** In-process: Yoga's fetch, no sockets, so thousands of cases fit in seconds. */
  inProcess(body: string | Uint8Array, auth: string | undefined): Promise<Reply>;
  /** What every answer must be, whatever was asked. */
  assertWellFormed(reply: Reply): void;
}

/** Starts the file's upstream and in-process gateway before its tests, and closes them after. */
export function usePropertyGateway(file: string): PropertyGateway {
  let upstream: FakeUpstream | undefined;
  let client: UpstreamClient | undefined;
  let gateway: YogaServer | undefined;
  let upstreamHost = '';
  let allCases = 0;
  let upstreamCalls = 0;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    upstream.tokens.add(TOKEN);
    upstream.seed(TOKEN, { id: '1', name: 'Rex', categoryId: '1', status: 'available' });
    upstream.seed(TOKEN, { id: '9007199254740993', name: 'Tom', categoryId: '9223372036854775807' });
    upstreamHost = new URL(upstream.url).host;
    client = createUpstreamClient({ baseUrl: new URL(upstream.url), timeoutMs: 2000, connections: 16 });
    gateway = createYogaServer({ upstream: client, logger: createLogger('silent') });
  });
  afterAll(async () => {
    console.log(`${file}: property cases run: ${allCases} (seed ${SEED}); upstream calls: ${upstreamCalls}`);
    await client?.close();
    await upstream?.close();
  });
  return {
    get upstream() {
      if (!upstream) throw new Error('the property gateway has not started');
      return upstream;
    },
    cases: 0,
    counted() {
      allCases += this.cases;
      upstreamCalls += this.upstream.requests.length;
      this.upstream.requests.length = 0;
    },
    async inProcess(body, auth) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
      };
      if (auth !== undefined) headers.authorization = auth;
      const response = await (gateway as YogaServer).fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers,
        body: typeof body === 'string' ? body : new Uint8Array(body),
      });
      return { status: response.status, text: await response.text() };
    },
    assertWellFormed(reply) {
      expect(reply.status).toBeLessThan(500);
      const body = JSON.parse(reply.text) as {
        errors?: Array<{ message?: unknown; extensions?: { code?: unknown } }>;
      };
      expect(typeof body).toBe('object');
      for (const error of body.errors ?? []) {
        const code = error.extensions?.code;
        expect(
          typeof code === 'string' && known.has(code),
          `unknown code ${String(code)} in ${reply.text.slice(0, 300)}`,
        ).toBe(true);
        expect(code).not.toBe('INTERNAL_SERVER_ERROR');
      }
      expect(reply.text).not.toContain(TOKEN);
      expect(reply.text).not.toContain(upstreamHost);
      expect(reply.text).not.toMatch(LEAK);
    },
  };
}
