// @tier integration

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPetstore, startPetstore } from '../../src/petstore/server.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';
import { execute } from '../support/graphql.ts';
import { CreatePet, GetPet, ListPets } from '../support/operations.ts';

// The gateway against the project's own implementation of the contract: real storage, real keys.
const KEY = 'reference-test-key';
const AUTH = `Bearer ${KEY}`;

let petstore: RunningPetstore;
let gateway: RunningGateway;

beforeAll(async () => {
  petstore = await startPetstore({ dbPath: ':memory:', apiKey: KEY, port: 0 });
  gateway = await startGateway({ upstreamUrl: petstore.url });
});

afterAll(async () => {
  await gateway.close();
  await petstore.close();
});

describe('gateway over the reference service', () => {
  it('lists the seeded pets within the limit and filters by status', async () => {
    const all = await execute(gateway.url, ListPets, { limit: 100 }, AUTH);
    expect(all.errors).toBeUndefined();
    expect(all.data?.pets.length).toBeGreaterThan(20);
    const defaults = await execute(gateway.url, ListPets, {}, AUTH);
    expect(defaults.data?.pets).toHaveLength(20);
    const sold = await execute(gateway.url, ListPets, { status: 'SOLD', limit: 100 }, AUTH);
    expect(sold.data?.pets.length).toBeGreaterThan(0);
    expect(sold.data?.pets.every((pet) => pet.status === 'SOLD')).toBe(true);
  });

  it('creates a pet with the largest int64 categoryId and reads it back exactly', async () => {
    const created = await execute(
      gateway.url,
      CreatePet,
      { input: { name: 'Ada', categoryId: '9223372036854775807', status: 'PENDING' } },
      AUTH,
    );
    expect(created.errors).toBeUndefined();
    const pet = created.data?.createPet;
    expect(pet).toMatchObject({ name: 'Ada', categoryId: '9223372036854775807', status: 'PENDING' });
    const read = await execute(gateway.url, GetPet, { id: pet?.id ?? '' }, AUTH);
    expect(read.data?.pet).toEqual(pet);
  });

  it('passes the service’s own error codes through: 404 and 401', async () => {
    const missing = await execute(gateway.url, GetPet, { id: '999999999' }, AUTH);
    expect(missing.data).toEqual({ pet: null });
    expect(missing.errors?.[0]?.extensions).toMatchObject({ status: 404 });
    const wrongKey = await execute(gateway.url, ListPets, {}, 'Bearer not-a-key');
    expect(wrongKey.errors?.[0]?.extensions).toMatchObject({ status: 401 });
    expect(typeof wrongKey.errors?.[0]?.extensions?.code).toBe('string');
    expect(wrongKey.text).not.toContain('not-a-key');
  });

  it('tells a key the service does not know from a missing header', async () => {
    const unknown = await execute(gateway.url, ListPets, {}, 'Bearer not-a-key');
    const missing = await execute(gateway.url, ListPets, {});
    expect(unknown.errors?.[0]?.message).toMatch(/API key is not known/);
    expect(missing.errors?.[0]?.message).toMatch(/header is required/);
    expect(unknown.errors?.[0]?.extensions?.code).toBe(missing.errors?.[0]?.extensions?.code);
  });
  it.each([
    ['a NUL', 'Rex\u0000'],
    ['an ESC', '\u001b[2JRex'],
    ['only a zero-width space', '\u200b'],
    ['a combining-mark flood', `Z${'\u0336'.repeat(150)}`],
  ])('passes the service’s refusal of a name with %s through with its code', async (_what, name) => {
    const created = await execute(gateway.url, CreatePet, { input: { name, categoryId: '1' } }, AUTH);
    expect(created.data).toBeNull();
    expect(created.errors?.[0]?.extensions).toEqual({ code: 'INVALID_FIELD', status: 400 });
  });
});
