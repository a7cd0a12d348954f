/**
 * Child process: the reference REST service. Env: BENCH_API_KEYS (comma-separated). One key: an
 * in-memory database with that key configured (PETSTORE_API_KEY's path). Several: the service takes
 * one configured key only, so every key is stored, hashed, in a database file in a temporary
 * directory (removed on exit), as `npm run petstore -- keys create` stores them; every request then
 * pays the service's own key lookup.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashApiKey } from '../src/petstore/keys.ts';
import { startPetstore } from '../src/petstore/server.ts';
import { openStorage } from '../src/petstore/storage.ts';
import { announce, requireKeys } from './child.ts';

const keys = requireKeys();
let petstore: Awaited<ReturnType<typeof startPetstore>>;
if (keys.length === 1) {
  petstore = await startPetstore({ dbPath: ':memory:', apiKey: keys[0] as string, port: 0 });
} else {
  const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-bench-petstore-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'petstore.db');
  const storage = openStorage(dbPath);
  for (const key of keys) storage.addKey('bench', hashApiKey(key));
  storage.close();
  petstore = await startPetstore({ dbPath, port: 0 });
}
announce(petstore.url);
