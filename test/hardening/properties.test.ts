// @tier slow: over 4,000 generated operations through Yoga in-process, a quarter minute of one core

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Operation, operation, query } from './arbitraries.ts';
import { authorization, MANY_CASES, runs, usePropertyGateway } from './property-gateway.ts';

// Random operations, schema-aware, with a fixed seed: the same cases every run. Random bodies,
// answers over sockets and callers' isolation are properties-bodies.test.ts's.

const p = usePropertyGateway('properties.test');

describe('random operations', () => {
  it('schema-aware random operations (in-process)', MANY_CASES, async () => {
    p.cases = 0;
    await fc.assert(
      fc.asyncProperty(operation, authorization, async (op: Operation, auth) => {
        p.cases++;
        p.assertWellFormed(await p.inProcess(JSON.stringify(op), auth));
      }),
      runs(4000),
    );
    // Every case ran: fast-check stops early only by failing.
    expect(p.cases).toBe(4000);
    p.counted();
  });

  it('random queries answer the same interpreted and compiled (in-process)', MANY_CASES, async () => {
    p.cases = 0;
    // A document's first run is interpreted by graphql-js, later runs compiled by graphql-jit:
    // status and bytes must not change. Mutations are left out: each run creates another pet.
    await fc.assert(
      fc.asyncProperty(query, authorization, async (op: Operation, auth) => {
        p.cases++;
        const body = JSON.stringify(op);
        const first = await p.inProcess(body, auth);
        for (let run = 0; run < 2; run++) expect(await p.inProcess(body, auth)).toEqual(first);
      }),
      runs(600),
    );
    // Every case ran: fast-check stops early only by failing.
    expect(p.cases).toBe(600);
    p.counted();
  });
});
