// @tier unit

import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { actualCost, estimateCost } from '../../src/execution/cost.ts';
import { schema } from '../../src/schema/index.ts';
import { subgraph } from '../../src/schema/subgraph.ts';

const estimate = (query: string, variables: Record<string, unknown> = {}, operationName?: string) =>
  estimateCost(schema, parse(query), variables, operationName);

const FOUR = 'id name categoryId status';

describe('the estimate, read from the schema’s @cost and @listSize', () => {
  it.each([
    // A list of pets: its limit × (the Pet object 1 + each field 1).
    [`{ pets(limit: 20) { ${FOUR} } }`, {}, 100],
    [`{ pets { ${FOUR} } }`, {}, 100],
    [`{ pets(limit: 100) { ${FOUR} } }`, {}, 500],
    [`{ pets(limit: 1) { id } }`, {}, 2],
    [`query ($n: Int) { pets(limit: $n) { id } }`, { n: 50 }, 100],
    // A variable left out takes the argument's default.
    [`query ($n: Int) { pets(limit: $n) { id } }`, {}, 40],
    [
      `{ a: pets(limit: 100) { ${FOUR} } b: pets(limit: 100) { ${FOUR} } c: pets(limit: 100) { ${FOUR} } }`,
      {},
      1500,
    ],
    [`{ pet(id: "1") { id name } }`, {}, 3],
    // A mutation's base is 10, as Apollo Router and Hive price it.
    [`mutation { createPet(input: { name: "Rex", categoryId: "1" }) { id } }`, {}, 12],
    // Introspection and __typename cost nothing.
    ['{ __typename }', {}, 0],
    ['{ __schema { types { name fields { name } } } }', {}, 0],
    [`{ pets(limit: 10) { __typename id } }`, {}, 20],
    // Fragments are flattened; a skipped selection costs nothing.
    [`{ pets(limit: 10) { ...F } } fragment F on Pet { id name }`, {}, 30],
    [`{ pets(limit: 10) { ... on Pet { id } } }`, {}, 20],
    [`query ($s: Boolean!) { pets(limit: 10) { id name @skip(if: $s) } }`, { s: true }, 20],
    [`query ($s: Boolean!) { pets(limit: 10) { id name @include(if: $s) } }`, { s: true }, 30],
    [`{ pets(limit: 10) { id } pet(id: "1") { id } }`, {}, 22],
  ])('%s %j costs %d', (query, variables, cost) => {
    expect(estimate(query, variables)).toBe(cost);
  });

  it('prices the operation the name chooses, and none that is not there', () => {
    const document = 'query A { pet(id: "1") { id } } query B { pets(limit: 5) { id } }';
    expect(estimate(document, {}, 'A')).toBe(2);
    expect(estimate(document, {}, 'B')).toBe(10);
    expect(estimate(document, {}, 'C')).toBeUndefined();
  });

  it('sizes _entities by its representations', () => {
    const { schema: sub } = subgraph();
    const query = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Pet { id name } } }';
    const representations = Array.from({ length: 7 }, (_, i) => ({ __typename: 'Pet', id: String(i) }));
    // 7 × (the _Entity union 1 + id 1 + name 1)
    expect(estimateCost(sub, parse(query), { r: representations })).toBe(21);
  });
});

describe('the actual cost, priced from the answer', () => {
  const query = parse(`{ pets(limit: 100) { ${FOUR} } pet(id: "1") { id } }`);

  it('counts the pets that came back, not the limit asked for', () => {
    const pets = Array.from({ length: 3 }, (_, i) => ({
      id: String(i),
      name: 'x',
      categoryId: '1',
      status: null,
    }));
    expect(estimateCost(schema, query)).toBe(502);
    // 3 × 5 + the pet (1 + id 1)
    expect(actualCost(schema, query, { pets, pet: { id: '1' } })).toBe(17);
  });

  it('prices a null object by its field alone, and an answer with no data by the operation’s base', () => {
    expect(actualCost(schema, query, { pets: [], pet: null })).toBe(1);
    expect(
      actualCost(schema, parse('mutation { createPet(input: { name: "R", categoryId: "1" }) { id } }'), null),
    ).toBe(10);
  });

  it('prices what was sent of an answer whose deferred part never came', () => {
    const deferred = parse('{ pet(id: "1") { id ... @defer { name } } }');
    expect(actualCost(schema, deferred, { pet: { id: '1' } })).toBe(2);
    expect(actualCost(schema, deferred, { pet: { id: '1', name: 'Rex' } })).toBe(3);
  });
});
