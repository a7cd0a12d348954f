// @tier unit

import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { compilePlan } from '../../src/execution/plan.ts';
import { requestsOf } from '../../src/execution/run-plan.ts';
import { oneCallOf } from '../../src/fast-lane/one-call.ts';
import { type Context, featuresNeedContext } from '../../src/schema/context.ts';
import { schema } from '../../src/schema/index.ts';
import {
  declaredWriteRoute,
  needsContext,
  requestWithHooks,
  UPSTREAM_EXTENSION,
  type UpstreamField,
} from '../../src/schema/upstream-field.ts';

// What a field's call needs beyond its arguments is declared once (UpstreamField's hooks) and run
// by one routine on every path; a path without a context serves only fields with no hook and only
// while no per-request feature lives on the context.

describe('a field’s hooks', () => {
  const ran: string[] = [];
  const hooks: Pick<UpstreamField<never, 'listPets'>, 'before' | 'within' | 'calling'> = {
    before: () => void ran.push('before'),
    within: () => void ran.push('within'),
    calling: () => void ran.push('calling'),
  };
  const ctx = {} as Context;

  it('run in one order around the request, on the context', () => {
    ran.length = 0;
    const build = () => {
      ran.push('request');
      return { limit: 3 };
    };
    const request = requestWithHooks(hooks, build, undefined, ctx);
    expect(request).toEqual({ limit: 3 });
    expect(ran).toEqual(['before', 'request', 'within', 'calling']);
  });

  it('make a field need the context, each on its own', () => {
    expect(needsContext({})).toBe(false);
    for (const name of ['before', 'within', 'calling'] as const)
      expect(needsContext({ [name]: hooks[name] }), name).toBe(true);
  });

  it('keep every field that has one off the context-free path, and run in a plan as in a resolver', () => {
    const rootFields = Object.values(schema.getQueryType()?.getFields() ?? {});
    const declared = rootFields.filter((field) => field.extensions?.[UPSTREAM_EXTENSION]);
    expect(declared.map((field) => field.name).sort()).toEqual(['pet', 'pets']);
    for (const field of declared) {
      const declaration = field.extensions[UPSTREAM_EXTENSION] as UpstreamField<never>;
      const document = field.name === 'pet' ? '{ pet(id: "1") { id } }' : '{ pets(limit: 2) { id } }';
      const plan = compilePlan(schema, parse(document), undefined);
      expect(plan, field.name).toBeDefined();
      // pet(id) has hooks (its sunset and its deprecation notice): never served without a context.
      expect(oneCallOf(plan) !== undefined, field.name).toBe(!needsContext(declaration));
    }
    // A plan runs the field's hooks on the context it is given, as the resolver does.
    const notices: string[] = [];
    const petPlan = compilePlan(schema, parse('{ pet(id: "1") { id } }'), undefined);
    const context = {
      now: () => new Date('2026-11-28T00:00:00Z'),
      deprecations: { usePet: () => void notices.push('Query.pet') },
      nameMaxLength: undefined,
    } as unknown as Context;
    if (!petPlan) throw new Error('no plan');
    expect(requestsOf(petPlan, {}, 1000, context)).toEqual(['1']);
    expect(notices).toEqual(['Query.pet']);
  });
});

describe('per-request features that live on the context', () => {
  const deps = {
    upstream: {},
    maxCost: 1000,
    maxRepresentations: 10,
    nameMaxLength: undefined,
    now: () => new Date(),
  };

  it('are listed in one place: the response cache and tracing each need a context', () => {
    expect(featuresNeedContext(deps as never, undefined)).toBe(false);
    expect(featuresNeedContext({ ...deps, cache: {} } as never, undefined)).toBe(true);
    expect(featuresNeedContext(deps as never, {})).toBe(true);
  });
});

describe("what the public schema says of its writes' retries", () => {
  it('"never retried" on the Mutation type, true of every route its fields declare', () => {
    // Retries follow each route's `idempotent` (upstream/retry.ts); the type's sentence must too.
    const mutation = schema.getMutationType();
    expect(mutation?.description).toMatch(/never retried/);
    const routes = Object.values(mutation?.getFields() ?? {}).map((field) => declaredWriteRoute(field));
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) expect(route?.idempotent, route?.name).toBe(false);
  });
});
