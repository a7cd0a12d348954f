// @tier ci: thousands of generated bodies and operations over real sockets, longer than npm test's 5 minutes allow

import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../support/gateway.ts';
import { mutatedBody, type Operation, operation, query } from './arbitraries.ts';
import { AUTH, authorization, MANY_CASES, type Reply, runs, usePropertyGateway } from './property-gateway.ts';
import { regressions } from './regressions.ts';

// Random bodies, the fast lane against FAST_LANE off, answers over real sockets, and callers who
// must never see each other's data, with a fixed seed: the same cases every run. Random
// operations in-process are properties.test.ts's.

const p = usePropertyGateway('properties-bodies.test');

describe('random bodies and operations over sockets', () => {
  it(
    'random queries answer the same through the fast lane as with FAST_LANE off (real sockets)',
    MANY_CASES,
    async () => {
      p.cases = 0;
      // Each query goes three times to a gateway with the fast lane (interpreted, then compiled and
      // prepared, then served by the fast lane when it succeeds) and once to one without it: status,
      // bytes and the headers a client reads must match every time.
      const edge = await startGateway({ upstreamUrl: p.upstream.url });
      const reference = await startGateway({ upstreamUrl: p.upstream.url, gateway: { fastLane: false } });
      const post = async (url: string, body: string, auth: string | undefined) => {
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          'x-request-id': 'property',
        };
        if (auth !== undefined) headers.authorization = auth;
        const response = await fetch(url, { method: 'POST', headers, body });
        const kept = ['content-type', 'content-length', 'deprecation', 'sunset', 'x-request-id', 'vary'];
        return {
          status: response.status,
          text: await response.text(),
          headers: kept.map((name) => `${name}: ${response.headers.get(name)}`),
        };
      };
      try {
        await fc.assert(
          fc.asyncProperty(query, authorization, async (op: Operation, auth) => {
            p.cases++;
            const body = JSON.stringify(op);
            const expected = await post(reference.url, body, auth);
            for (let run = 0; run < 3; run++) expect(await post(edge.url, body, auth)).toEqual(expected);
          }),
          runs(300),
        );
        // Every case ran: fast-check stops early only by failing.
        expect(p.cases).toBe(300);
        p.counted();
        // The comparison is only worth something if the fast lane served some of them: most random
        // operations fail (bad auth, refused arguments) or use @skip/@include (never compiled), so
        // Yoga answers them; the fixed seed gives 39 fast answers.
        expect(edge.lanes?.served.fast).toBeGreaterThan(30);
      } finally {
        await edge.close();
        await reference.close();
      }
    },
  );

  it('mutated request bodies (in-process)', MANY_CASES, async () => {
    p.cases = 0;
    await fc.assert(
      fc.asyncProperty(mutatedBody, authorization, async (body, auth) => {
        p.cases++;
        p.assertWellFormed(await p.inProcess(body, auth));
      }),
      runs(5500),
    );
    // Every case ran: fast-check stops early only by failing.
    expect(p.cases).toBe(5500);
    p.counted();
  });

  it('random operations and mutated bodies over real sockets', MANY_CASES, async () => {
    p.cases = 0;
    const served = await startGateway({ upstreamUrl: p.upstream.url });
    const { url } = served;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            operation.map((op) => Buffer.from(JSON.stringify(op))),
            mutatedBody,
          ),
          authorization,
          async (body, auth) => {
            p.cases++;
            const headers: Record<string, string> = {
              'content-type': 'application/json',
              accept: 'application/graphql-response+json, application/json',
            };
            if (auth !== undefined) headers.authorization = auth;
            const response = await fetch(url, { method: 'POST', headers, body: new Uint8Array(body) });
            p.assertWellFormed({ status: response.status, text: await response.text() });
          },
        ),
        runs(400),
      );
      // Every case ran: fast-check stops early only by failing.
      expect(p.cases).toBe(400);
      p.counted();
    } finally {
      await served.close();
    }
  });
});

describe('callers with distinct tokens', () => {
  const callers = ['amber', 'basil', 'cedar', 'delta'].map((name) => ({
    name,
    token: `iso-${name}-token-77`,
  }));

  beforeAll(() => {
    for (const [i, caller] of callers.entries()) {
      p.upstream.tokens.add(caller.token);
      for (const n of [1, 2, 3]) {
        p.upstream.seed(caller.token, {
          id: String(1000 * (i + 1) + n),
          name: `${caller.name}-seed-${n}`,
          categoryId: String(i + 1),
        });
      }
    }
  });

  type Call = { caller: number; op: 'list' | 'create' | 'byOwnId' | 'byOtherId'; other: number };
  const call = fc.record({
    caller: fc.nat(callers.length - 1),
    op: fc.constantFrom('list', 'create', 'byOwnId', 'byOtherId') as fc.Arbitrary<Call['op']>,
    other: fc.nat(callers.length - 1),
  });

  function request(c: Call): Operation {
    const me = callers[c.caller] as (typeof callers)[number];
    switch (c.op) {
      case 'list':
        return { query: '{ pets(limit: 100) { id name } }' };
      case 'create':
        return {
          query:
            'mutation M($name: String!) { createPet(input: { name: $name, categoryId: "1" }) { id name } }',
          variables: { name: `${me.name}-made` },
        };
      case 'byOwnId':
        return { query: `{ pet(id: "${1000 * (c.caller + 1) + 1}") { id name } pets(limit: 3) { name } }` };
      case 'byOtherId':
        return { query: `{ pet(id: "${1000 * (c.other + 1) + 2}") { id name } }` };
    }
  }

  /** Everything a caller may see: its own pet names, its own seeded ids, never another's token. */
  function assertIsolated(c: Call, reply: Reply): void {
    p.assertWellFormed(reply);
    const me = callers[c.caller] as (typeof callers)[number];
    for (const other of callers) {
      if (other === me) continue;
      expect(reply.text).not.toContain(`${other.name}-`);
      expect(reply.text).not.toContain(other.token);
    }
    expect(reply.text).not.toContain(me.token);
    const body = JSON.parse(reply.text) as {
      data?: Record<string, unknown>;
      errors?: Array<{ extensions?: { code?: string } }>;
    };
    if (c.op === 'byOtherId' && c.other !== c.caller) {
      expect(body.data?.pet).toBeNull();
      expect(body.errors?.map((e) => e.extensions?.code)).toEqual(['PET_NOT_FOUND']);
    } else {
      expect(body.errors).toBeUndefined();
    }
  }

  it(
    'never see each other’s data or tokens, whatever the interleaving (fc.scheduler)',
    MANY_CASES,
    async () => {
      p.cases = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          fc.array(call, { minLength: 2, maxLength: 10 }),
          async (s, calls) => {
            p.cases++;
            // Each answer is released in an order the scheduler picks; the upstream calls themselves
            // run truly concurrently over the shared pool.
            const send = s.scheduleFunction(async (c: Call) => {
              const me = callers[c.caller] as (typeof callers)[number];
              return p.inProcess(JSON.stringify(request(c)), `Bearer ${me.token}`);
            });
            const all = Promise.all(calls.map(async (c) => assertIsolated(c, await send(c))));
            await s.waitFor(all);
            await all;
          },
        ),
        runs(300),
      );
      // Every case ran: fast-check stops early only by failing.
      expect(p.cases).toBe(300);
      p.counted();
    },
  );

  it('never see each other’s data over real sockets, all at once', MANY_CASES, async () => {
    p.cases = 0;
    const served = await startGateway({ upstreamUrl: p.upstream.url });
    const { url } = served;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(call, { minLength: 4, maxLength: 16 }), async (calls) => {
          p.cases++;
          await Promise.all(
            calls.map(async (c) => {
              const me = callers[c.caller] as (typeof callers)[number];
              const response = await fetch(url, {
                method: 'POST',
                headers: { 'content-type': 'application/json', authorization: `Bearer ${me.token}` },
                body: JSON.stringify(request(c)),
              });
              assertIsolated(c, { status: response.status, text: await response.text() });
            }),
          );
        }),
        runs(150),
      );
      // Every case ran: fast-check stops early only by failing.
      expect(p.cases).toBe(150);
      p.counted();
    } finally {
      await served.close();
    }
  });
});

describe('regressions (counterexamples kept from earlier runs)', () => {
  for (const r of regressions) {
    (r.knownBug ? it.fails : it)(r.name, async () => {
      const reply = await p.inProcess(
        r.body,
        r.authorization === null ? undefined : (r.authorization ?? AUTH),
      );
      p.assertWellFormed(reply);
      if (r.code) expect(reply.text).toContain(`"code":"${r.code}"`);
    });
  }
});
