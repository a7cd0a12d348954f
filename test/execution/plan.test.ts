// @tier unit

import { GraphQLID, GraphQLNonNull, type GraphQLObjectType, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { compilePlan, describePlan } from '../../src/execution/plan.ts';
import { schema } from '../../src/schema/index.ts';
import { fromUpstream } from '../../src/schema/upstream-field.ts';
import type { PetDto } from '../../src/upstream/bodies.ts';
import { withMutation } from '../support/extra-mutation.ts';

/** The plan the builder makes of a document, as describePlan prints it; `undefined` when it makes none. */
function planOf(document: string, operationName?: string): string | undefined {
  const plan = compilePlan(schema, parse(document), operationName);
  return plan && describePlan(plan);
}

describe('the plan builder', () => {
  it('plans a list with its arguments as the request, its cost fixed', () => {
    expect(planOf('{ pets(limit: 3, status: SOLD) { id name status } }')).toMatchInlineSnapshot(`
      "query, cost 12, calls listPets
      pets: listPets {"limit":3,"status":"sold"} → list
        id: .id as string
        name: .name as string
        status: .status as enum, nullable"
    `);
  });

  it('applies the default limit, and keeps aliases and field order', () => {
    expect(planOf('{ all: pets { n: name id } pets(limit: 1) { id } }')).toMatchInlineSnapshot(`
      "query, cost 62, calls listPets
      all: listPets {"limit":20} → list
        n: .name as string
        id: .id as string
      pets: listPets {"limit":1} → list
        id: .id as string"
    `);
  });

  it('merges a response key asked for twice, through fragments on the type itself', () => {
    expect(
      planOf(`query Q { pets { id ...F ... on Pet { name id } } }
        fragment F on Pet { status name }`),
    ).toMatchInlineSnapshot(`
      "query, cost 120, calls listPets
      pets: listPets {"limit":20} → list
        id: .id as string
        status: .status as enum, nullable
        name: .name as string"
    `);
  });

  it('answers __typename at the root and below from the schema', () => {
    expect(planOf('{ __typename pets(limit: 1) { __typename kind: __typename id } }')).toMatchInlineSnapshot(`
      "query, cost 2, calls listPets
      __typename: "Query"
      pets: listPets {"limit":1} → list
        __typename: "Pet"
        kind: "Pet"
        id: .id as string"
    `);
  });

  it('builds the request from variables per request, and prices it then', () => {
    expect(
      planOf('query ($n: Int, $s: PetStatus) { pets(limit: $n, status: $s) { id } }'),
    ).toMatchInlineSnapshot(`
      "query($n, $s), priced per request, calls listPets
      pets: listPets built from variables → list
        id: .id as string"
    `);
  });

  it('orders calls by the loaders first used, as DataLoader batches go out', () => {
    expect(
      planOf('{ a: pet(id: "2") { id } pets(limit: 1) { id } b: pet(id: "007") { id } }'),
    ).toMatchInlineSnapshot(`
      "query, cost 6, calls getPet then listPets
      a: getPet "2" → object, nullable
        id: .id as string
      pets: listPets {"limit":1} → list
        id: .id as string
      b: getPet "7" → object, nullable
        id: .id as string"
    `);
  });

  it('plans a mutation, its calls in field order', () => {
    expect(
      planOf('mutation { createPet(input: { name: "Rex", categoryId: "9223372036854775807" }) { id name } }'),
    ).toMatchInlineSnapshot(`
      "mutation, cost 13, calls write
      createPet: write POST /pets {"body":{"name":"Rex","categoryId":"9223372036854775807"}} → object
        id: .id as string
        name: .name as string"
    `);
  });

  it.each([
    ['a directive on a field', '{ pets { id @skip(if: false) } }'],
    ['a directive on the operation', 'query @foo { pets { id } }'],
    ['a directive on a fragment', '{ pets { ...F } } fragment F on Pet @foo { id }'],
    ['two operations', 'query A { pets { id } } query B { pets { name } }'],
    ['a subscription', 'subscription { pets { id } }'],
    ['introspection below the root', '{ __schema { types { name } } }'],
    ['a fragment on another type', '{ pets { ... on Query { __typename } } }'],
    ['an argument the contract refuses, known when planning', '{ pets(limit: 0) { id } }'],
    ['an id past int64', '{ pet(id: "9223372036854775808") { id } }'],
    ['a root field selected without its fields', '{ pets }'],
    ['a key named __proto__', '{ pets { __proto__: id } }'],
  ])('makes no plan for %s', (_case, document) => {
    expect(planOf(document)).toBeUndefined();
  });

  it('makes no plan for an operation name the document does not have', () => {
    expect(planOf('query A { pets { id } }', 'B')).toBeUndefined();
    expect(planOf('query A { pets { id } }', 'A')).toBeDefined();
  });

  it("makes no plan for a field that maps its call's answer: only its resolver makes what it answers", () => {
    const renaming = withMutation(schema, 'renamed', {
      type: new GraphQLNonNull(schema.getType('Pet') as GraphQLObjectType),
      args: { id: { type: new GraphQLNonNull(GraphQLID) } },
      ...fromUpstream({
        call: 'getPet',
        request: ({ id }: { id: string }) => id,
        answer: (pet: PetDto) => ({ ...pet, name: pet.name.toUpperCase() }),
      }),
    });
    expect(compilePlan(renaming, parse('mutation { renamed(id: "7") { name } }'), undefined)).toBeUndefined();
  });
});
