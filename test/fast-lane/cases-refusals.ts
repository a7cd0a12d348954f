import type { Case } from './sides.ts';

// What is refused, each sent alike to every side: bad variables and input, upstream errors and
// deadlines, missing or unknown keys, a cost over the limit, an operation name not in the document.

/**
 * A createPet whose `input` is refused before anything is sent, its document warmed first with an
 * input that passes.
 */
function refusedInput(name: string, operation: string, input: Record<string, unknown>): Case {
  const query = `mutation ${operation}($input: NewPetInput!) { createPet(input: $input) { name } }`;
  return {
    name,
    code: 'BAD_USER_INPUT',
    body: { query, variables: { input } },
    warm: { query, variables: { input: { name: 'Warm', categoryId: '1' } } },
  };
}

export const refusalCases: Case[] = [
  {
    name: 'an ID variable sent as a JSON number past 2^53 (rounded, refused)',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: 2 ** 53 + 2 } },
    yogaOnly: true,
  },
  {
    name: 'an upstream 404 after the document was prepared',
    code: 'PET_NOT_FOUND',
    warm: { query: 'query Pet($id: ID!) { pet(id: $id) { id name } }', variables: { id: '2' } },
    body: { query: 'query Pet($id: ID!) { pet(id: $id) { id name } }', variables: { id: '404' } },
  },
  {
    name: 'an upstream 500 Error body on a list',
    code: 'BOOM',
    body: { query: '{ pets(limit: 2) { id } }' },
    setup: (upstream) =>
      upstream.fault(
        /^\/v1\/pets/,
        (_req, res) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"code":"BOOM","message":"exploded","status":500}');
        },
        1,
      ),
  },
  {
    name: 'an upstream that never answers (deadline)',
    code: 'UPSTREAM_TIMEOUT',
    body: { query: '{ pets(limit: 4) { id } }' },
    setup: (upstream) => upstream.fault(/^\/v1\/pets/, () => {}, 1),
  },
  {
    name: 'a limit outside 1..100 in variables',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query L($l: Int) { pets(limit: $l) { id } }', variables: { l: 2 } },
    body: { query: 'query L($l: Int) { pets(limit: $l) { id } }', variables: { l: 101 } },
  },
  {
    name: 'a variable of the wrong type',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: { nested: true } } },
  },
  {
    name: 'a missing required variable',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: {} },
  },
  {
    name: 'an id out of int64 range',
    code: 'BAD_USER_INPUT',
    warm: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '2' } },
    body: { query: 'query P($id: ID!) { pet(id: $id) { id } }', variables: { id: '9223372036854775808' } },
  },
  {
    name: 'no Authorization header',
    code: 'UNAUTHENTICATED',
    body: { query: '{ pets(limit: 5) { id name } }' },
    headers: { authorization: '' },
  },
  {
    name: 'a key the upstream refuses',
    code: 'UNAUTHENTICATED',
    body: { query: '{ pets(limit: 6) { id name } }' },
    headers: { authorization: 'Bearer not-a-known-key' },
  },
  {
    name: 'a cost over the limit, decided by the variables',
    code: 'COST_LIMIT_EXCEEDED',
    warm: {
      query:
        'query C($l: Int) { a: pets(limit: $l) { id name categoryId } b: pets(limit: $l) { id name categoryId } c: pets(limit: $l) { id name } d: pets(limit: $l) { id } e: pets(limit: $l) { id name categoryId } }',
      variables: { l: 1 },
    },
    body: {
      query:
        'query C($l: Int) { a: pets(limit: $l) { id name categoryId } b: pets(limit: $l) { id name categoryId } c: pets(limit: $l) { id name } d: pets(limit: $l) { id } e: pets(limit: $l) { id name categoryId } }',
      variables: { l: 100 },
    },
  },
  refusedInput('a lone surrogate in createPet input.name (refused, nothing sent)', 'Odd', {
    name: 'Rex\ud800',
    categoryId: '1',
  }),
  refusedInput('a blank createPet input.name (refused with its argument, nothing sent)', 'Blank', {
    name: '   ',
    categoryId: '1',
  }),
  refusedInput(
    'a createPet input.name past NAME_MAX_LENGTH (refused with its argument, nothing sent)',
    'Long',
    { name: 'n'.repeat(201), categoryId: '1' },
  ),
  refusedInput('name missing from a createPet variable (400, argument input.name)', 'NoName', {
    categoryId: '1',
  }),
  {
    name: 'a createPet the upstream refuses, sent once',
    code: 'PET_EXISTS',
    body: {
      query: 'mutation Again($input: NewPetInput!) { createPet(input: $input) { name } }',
      variables: { input: { name: 'Rex', categoryId: '1' } },
    },
    setup: (upstream) =>
      upstream.fault(
        /^\/v1\/pets$/,
        (_req, res) => {
          res.writeHead(409, { 'content-type': 'application/json' });
          res.end('{"code":"PET_EXISTS","message":"Rex is already here.","status":409}');
        },
        1,
      ),
  },
  {
    name: 'an operation name the document does not hold (never prepared)',
    code: 'OPERATION_RESOLUTION_FAILURE',
    warm: { query: 'query One { pets(limit: 1) { id } }', operationName: 'One' },
    body: { query: 'query One { pets(limit: 1) { id } }', operationName: 'Two' },
    yogaOnly: true,
  },
];
