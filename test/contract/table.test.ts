// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPetstore, TEST_KEY, type TestPetstore } from '../petstore/helpers.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { CONTRACT_TABLE, type ContractRow } from './table.ts';

/** Sends a row's request to an implementation whose `/v1` is at `base`. */
async function send(base: string, row: ContractRow): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = row.anonymous ? {} : { authorization: `Bearer ${TEST_KEY}` };
  if (row.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${row.path}`, {
    method: row.method,
    headers,
    ...(row.body === undefined ? {} : { body: row.body }),
  });
  return { status: response.status, body: JSON.parse(await response.text()) };
}

function expectAnswer(row: ContractRow, answer: { status: number; body: unknown }): void {
  expect(answer.status, row.name).toBe(row.status);
  if (row.code !== undefined) {
    expect(answer.body, row.name).toMatchObject({
      code: row.code,
      status: row.status,
      message: expect.any(String),
    });
  } else if (row.list !== undefined) {
    const pets = answer.body as Array<{ status?: string }>;
    expect(Array.isArray(pets) && pets.length <= row.list.atMost, row.name).toBe(true);
    if (row.list.status) for (const pet of pets) expect(pet.status, row.name).toBe(row.list.status);
  } else {
    expect(answer.body, row.name).toMatchObject({ id: expect.anything(), name: expect.any(String) });
  }
}

let petstore: TestPetstore;
let fake: FakeUpstream;

beforeAll(async () => {
  petstore = await startTestPetstore();
  fake = await startFakeUpstream();
  fake.tokens.add(TEST_KEY);
  // Enough pets for every list row to hold some, some of them sold.
  for (let index = 0; index < 30; index++) {
    fake.seed(TEST_KEY, {
      id: String(index + 1),
      name: `Pet ${index}`,
      categoryId: '1',
      status: index % 3 ? 'available' : 'sold',
    });
  }
});

afterAll(async () => {
  await petstore?.close();
  await fake?.close();
});

describe('the contract table', () => {
  it('covers every error code the gateway maps from a request it could send', () => {
    const codes = new Set(CONTRACT_TABLE.map((row) => row.code).filter(Boolean));
    for (const code of [
      'INVALID_LIMIT',
      'INVALID_STATUS',
      'INVALID_PET_ID',
      'MISSING_FIELD',
      'INVALID_FIELD',
      'UNAUTHENTICATED',
      'PET_NOT_FOUND',
    ]) {
      expect(codes.has(code), code).toBe(true);
    }
  });

  describe.each([
    ['the reference service', () => petstore.url],
    ['the tests’ upstream', () => fake.url],
  ])('answered by %s', (_name, base) => {
    it.each(CONTRACT_TABLE.map((row) => [row.name, row] as const))('%s', async (_row, row) => {
      expectAnswer(row, await send(base(), row));
    });
  });
});
