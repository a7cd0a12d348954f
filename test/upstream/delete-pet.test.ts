// @tier integration

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoute } from '../../src/contract/routes.ts';
import { HttpError } from '../../src/petstore/errors.ts';
import { type Handler, parsePetId } from '../../src/petstore/routes.ts';
import { startTestPetstore, type TestPetstore, tempDir } from '../petstore/helpers.ts';

// The walk docs/architecture.md gives for a new mutation, taken with a route the contract lacks:
// `deletePet` (DELETE /pets/{petId}, answered 204 with no body), declared here with its reference
// handler, its field and nothing else, and followed end to end: the reference service, the
// gateway, the caches of the writer and of another key, and the MCP tool.

/** The test's own route: the contract has no way to remove a pet. */
const DELETE_PET = defineRoute({
  operationId: 'deletePet',
  method: 'DELETE',
  path: '/pets/{petId}',
  // RFC 9110: a DELETE sent twice leaves the store as once (the pet is gone), so it may be resent.
  idempotent: true,
  success: { status: 204, answer: 'none' },
  changes: { lists: true, item: true },
});

/** The reference service's handler, as src/petstore/routes.ts HANDLERS would hold it. */
const removePet: Handler = ({ res, params, storage }) => {
  const id = parsePetId(params[0] ?? '');
  if (!storage.deletePet(id)) throw new HttpError('PET_NOT_FOUND', `no pet with id ${id}`);
  res.writeHead(DELETE_PET.success.status);
  res.end();
};

let directory: ReturnType<typeof tempDir>;
let petstore: TestPetstore;

beforeAll(async () => {
  directory = tempDir();
  const dbPath = join(directory.dir, 'store.db');
  petstore = await startTestPetstore({ dbPath, routes: [{ route: DELETE_PET, handler: removePet }] });
});
afterAll(async () => {
  await petstore?.close();
  directory?.remove();
});

/** A new pet of the reference store, by its id. */
async function newPet(name: string): Promise<string> {
  const created = await petstore.api('/v1/pets', { body: { name, categoryId: 1, status: 'available' } });
  return String((created.body as { id: number }).id);
}

describe('the reference service, given the route and its handler', () => {
  it('answers the DELETE 204 with no body, without the deprecation GET /pets/{petId} carries', async () => {
    const id = await newPet('Gone');
    const removed = await petstore.api(`/v1/pets/${id}`, { method: 'DELETE' });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect(removed.headers.get('deprecation')).toBeNull();
    expect(removed.headers.get('sunset')).toBeNull();

    const again = await petstore.api(`/v1/pets/${id}`, { method: 'DELETE' });
    expect(again).toMatchObject({ status: 404, body: { code: 'PET_NOT_FOUND' } });
    expect(again.headers.get('deprecation')).toBeNull();
    // The same path's GET is the deprecated route: it still says so, on its 404 too.
    const read = await petstore.api(`/v1/pets/${id}`);
    expect(read.status).toBe(404);
    expect(read.headers.get('deprecation')).not.toBeNull();
  });
});
