import { INT64_MAX, LIST_LIMIT } from '../../src/contract/animal-store.ts';
import { REFERENCE_NAME } from '../../src/petstore/names.ts';

/** One request of the contract and what any implementation of it answers. */
export interface ContractRow {
  name: string;
  method: 'GET' | 'POST';
  /** Below `/v1`. */
  path: string;
  /** Sent as is, with `Content-Type: application/json`. */
  body?: string;
  /** Send no Authorization header. */
  anonymous?: boolean;
  status: number;
  /** The Error body's `code`, for an error. */
  code?: string;
  /** For a list: at most this many pets, every one with this status when given. */
  list?: { atMost: number; status?: string };
}

const name = (length: number) => 'n'.repeat(length);
const newPet = (fields: Record<string, unknown>) => JSON.stringify({ categoryId: 1, ...fields });

/**
 * The contract's requests at its edges, and the answers the reference service and the tests'
 * upstream must both give (test/contract/table.test.ts). Each limit is taken at both sides.
 */
export const CONTRACT_TABLE: readonly ContractRow[] = [
  {
    name: 'list, default limit',
    method: 'GET',
    path: '/pets',
    status: 200,
    list: { atMost: LIST_LIMIT.default },
  },
  {
    name: 'list, smallest limit',
    method: 'GET',
    path: `/pets?limit=${LIST_LIMIT.min}`,
    status: 200,
    list: { atMost: LIST_LIMIT.min },
  },
  {
    name: 'list, largest limit',
    method: 'GET',
    path: `/pets?limit=${LIST_LIMIT.max}`,
    status: 200,
    list: { atMost: LIST_LIMIT.max },
  },
  {
    name: 'list, limit below',
    method: 'GET',
    path: `/pets?limit=${LIST_LIMIT.min - 1}`,
    status: 400,
    code: 'INVALID_LIMIT',
  },
  {
    name: 'list, limit above',
    method: 'GET',
    path: `/pets?limit=${LIST_LIMIT.max + 1}`,
    status: 400,
    code: 'INVALID_LIMIT',
  },
  {
    name: 'list, limit not a number',
    method: 'GET',
    path: '/pets?limit=ten',
    status: 400,
    code: 'INVALID_LIMIT',
  },
  {
    name: 'list, limit twice',
    method: 'GET',
    path: '/pets?limit=1&limit=2',
    status: 400,
    code: 'INVALID_LIMIT',
  },
  // Leading zeros: the value decides, however many (the gateway reads "007" as 7 the same way).
  {
    name: 'list, limit with a leading zero',
    method: 'GET',
    path: '/pets?limit=0100',
    status: 200,
    list: { atMost: 100 },
  },
  {
    name: 'list, limit with many leading zeros',
    method: 'GET',
    path: '/pets?limit=00001',
    status: 200,
    list: { atMost: 1 },
  },
  {
    name: 'list, limit of zeros only',
    method: 'GET',
    path: '/pets?limit=00000',
    status: 400,
    code: 'INVALID_LIMIT',
  },
  {
    name: 'list, by status',
    method: 'GET',
    path: '/pets?status=sold',
    status: 200,
    list: { atMost: LIST_LIMIT.default, status: 'sold' },
  },
  {
    name: 'list, unknown status',
    method: 'GET',
    path: '/pets?status=lost',
    status: 400,
    code: 'INVALID_STATUS',
  },
  {
    name: 'list, no key',
    method: 'GET',
    path: '/pets',
    anonymous: true,
    status: 401,
    code: 'UNAUTHENTICATED',
  },
  {
    name: 'by id, largest int64 unknown',
    method: 'GET',
    path: `/pets/${INT64_MAX}`,
    status: 404,
    code: 'PET_NOT_FOUND',
  },
  {
    name: 'by id, past int64',
    method: 'GET',
    path: `/pets/${INT64_MAX + 1n}`,
    status: 400,
    code: 'INVALID_PET_ID',
  },
  {
    name: 'by id, leading zeros past 20 digits',
    method: 'GET',
    path: `/pets/${'0'.repeat(30)}1`,
    status: 200,
  },
  {
    name: 'by id, past int64 behind leading zeros',
    method: 'GET',
    path: `/pets/${'0'.repeat(30)}${INT64_MAX + 1n}`,
    status: 400,
    code: 'INVALID_PET_ID',
  },
  { name: 'by id, not a number', method: 'GET', path: '/pets/abc', status: 400, code: 'INVALID_PET_ID' },
  {
    name: 'create',
    method: 'POST',
    path: '/pets',
    body: newPet({ name: 'Rex', status: 'available' }),
    status: 201,
  },
  {
    name: 'create, longest name',
    method: 'POST',
    path: '/pets',
    body: newPet({ name: name(REFERENCE_NAME.max) }),
    status: 201,
  },
  {
    name: 'create, name too long',
    method: 'POST',
    path: '/pets',
    body: newPet({ name: name(REFERENCE_NAME.max + 1) }),
    status: 400,
    code: 'INVALID_FIELD',
  },
  {
    name: 'create, blank name',
    method: 'POST',
    path: '/pets',
    body: newPet({ name: '   ' }),
    status: 400,
    code: 'INVALID_FIELD',
  },
  // The reference service's own name rules (src/petstore/names.ts, docs/reference-service.md).
  ...(
    [
      ['a NUL', 'Rex\u0000'],
      ['an ESC', '\u001b[31mRex'],
      ['a line feed inside', 'Rex\nJr'],
      ['a C1 control', 'Rex\u0085'],
      ['only a zero-width space', '\u200b'],
      ['only invisible characters', ' \u200b\u200d\ufeff\u2060 '],
      ['only combining marks', '\u0301\u0302'],
      ['a letter under 31 combining marks', `a${'\u0301'.repeat(31)}`],
    ] as const
  ).map(
    ([what, text]): ContractRow => ({
      name: `create, name with ${what}`,
      method: 'POST',
      path: '/pets',
      body: newPet({ name: text }),
      status: 400,
      code: 'INVALID_FIELD',
    }),
  ),
  ...(
    [
      ['joiners inside an emoji', '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}'],
      ['decomposed accents', 'Vie\u0323\u0302t'],
      ['a letter under 30 combining marks', `a${'\u0301'.repeat(30)}`],
      ['a tab around it', '\tRex\t'],
    ] as const
  ).map(
    ([what, text]): ContractRow => ({
      name: `create, name with ${what}`,
      method: 'POST',
      path: '/pets',
      body: newPet({ name: text }),
      status: 201,
    }),
  ),
  {
    name: 'create, no name',
    method: 'POST',
    path: '/pets',
    body: newPet({}),
    status: 400,
    code: 'MISSING_FIELD',
  },
  {
    name: 'create, name not a string',
    method: 'POST',
    path: '/pets',
    body: newPet({ name: 7 }),
    status: 400,
    code: 'INVALID_FIELD',
  },
  {
    name: 'create, no categoryId',
    method: 'POST',
    path: '/pets',
    body: '{"name":"Rex"}',
    status: 400,
    code: 'MISSING_FIELD',
  },
  {
    name: 'create, categoryId past int64',
    method: 'POST',
    path: '/pets',
    body: `{"name":"Rex","categoryId":${INT64_MAX + 1n}}`,
    status: 400,
    code: 'INVALID_FIELD',
  },
  {
    name: 'create, categoryId a string',
    method: 'POST',
    path: '/pets',
    body: '{"name":"Rex","categoryId":"1"}',
    status: 400,
    code: 'INVALID_FIELD',
  },
  {
    name: 'create, unknown status',
    method: 'POST',
    path: '/pets',
    body: newPet({ name: 'Rex', status: 'lost' }),
    status: 400,
    code: 'INVALID_FIELD',
  },
  {
    name: 'create, unknown field',
    method: 'POST',
    path: '/pets',
    body: newPet({ name: 'Rex', colour: 'red' }),
    status: 400,
    code: 'UNKNOWN_FIELD',
  },
  {
    name: 'create, not an object',
    method: 'POST',
    path: '/pets',
    body: '[]',
    status: 400,
    code: 'INVALID_BODY',
  },
  {
    name: 'create, not JSON',
    method: 'POST',
    path: '/pets',
    body: '{"name":',
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    name: 'create, no key',
    method: 'POST',
    path: '/pets',
    body: newPet({ name: 'Rex' }),
    anonymous: true,
    status: 401,
    code: 'UNAUTHENTICATED',
  },
];
