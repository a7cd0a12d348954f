// @tier integration

import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, test } from 'vitest';
import { startTestPetstore, tempDir } from './helpers.ts';

const tmp = tempDir();
afterAll(() => tmp.remove());

describe('durability', () => {
  test('an acknowledged create survives a restart on the same file', async () => {
    const dbPath = join(tmp.dir, 'restart.db');
    const first = await startTestPetstore({ dbPath });
    const created = await first.api('/v1/pets', {
      body: { name: 'Survivor', categoryId: 3, status: 'sold' },
    });
    expect(created.status).toBe(201);
    await first.close();

    const second = await startTestPetstore({ dbPath });
    const fetched = await second.api(`/v1/pets/${(created.body as { id: number }).id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.text).toBe(created.text);
    // The seed ran once only: 36 + 1.
    expect(((await second.api('/v1/pets?limit=100')).body as unknown[]).length).toBe(37);
    await second.close();
  });

  test('the database runs in WAL mode with synchronous=FULL', async () => {
    const dbPath = join(tmp.dir, 'wal.db');
    const running = await startTestPetstore({ dbPath });
    await running.close();
    const db = new DatabaseSync(dbPath);
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    db.close();
  });

  test('200 concurrent creates get 200 distinct ids and all are stored', async () => {
    const dbPath = join(tmp.dir, 'concurrent.db');
    const running = await startTestPetstore({ dbPath, seed: false });
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        running.api('/v1/pets', { body: { name: `Pet ${i}`, categoryId: i } }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(200).fill(201));
    const ids = new Set(responses.map((r) => (r.body as { id: number }).id));
    expect(ids.size).toBe(200);
    const listed = (await running.api('/v1/pets?limit=100')).body as { id: number }[];
    expect(listed).toHaveLength(100);
    expect(listed.every((pet) => ids.has(pet.id))).toBe(true);
    await running.close();

    const db = new DatabaseSync(dbPath);
    const rows = db.prepare('SELECT id, name FROM pets ORDER BY id').all() as { id: number; name: string }[];
    db.close();
    expect(rows).toHaveLength(200);
    expect(new Set(rows.map((row) => row.name)).size).toBe(200);
  });

  test('seed: false leaves an empty database empty', async () => {
    const running = await startTestPetstore({ seed: false });
    expect((await running.api('/v1/pets')).body).toEqual([]);
    await running.close();
  });
});

describe('int64 ids beyond 2^53', () => {
  test('a stored id of 2^53 + 1 is served exactly, and the next created id is 2^53 + 2', async () => {
    const dbPath = join(tmp.dir, 'int64.db');
    // Create the schema, then place a row the way another writer could.
    await (await startTestPetstore({ dbPath, seed: false })).close();
    const db = new DatabaseSync(dbPath);
    db.prepare('INSERT INTO pets (id, name, category_id, status) VALUES (?, ?, ?, ?)').run(
      9007199254740993n,
      'Big',
      9223372036854775807n,
      'available',
    );
    db.close();

    const running = await startTestPetstore({ dbPath, seed: false });
    const fetched = await running.api('/v1/pets/9007199254740993');
    expect(fetched.status).toBe(200);
    expect(fetched.text).toBe(
      '{"id":9007199254740993,"name":"Big","categoryId":9223372036854775807,"status":"available"}',
    );
    // 9007199254740992 would be what a double-rounded id looks like: it must not exist.
    expect((await running.api('/v1/pets/9007199254740992')).status).toBe(404);

    const created = await running.api('/v1/pets', { body: '{"name":"Next","categoryId":9007199254740995}' });
    expect(created.status).toBe(201);
    expect(created.text).toBe('{"id":9007199254740994,"name":"Next","categoryId":9007199254740995}');
    expect(created.headers.get('location')).toBe('/v1/pets/9007199254740994');

    const listed = await running.api('/v1/pets');
    expect(listed.text).toContain('"id":9007199254740993,');
    expect(listed.text).toContain('"id":9007199254740994,');
    await running.close();
  });
});

describe('size on disk', () => {
  test('the WAL stays small under create-only traffic (checkpoints are not held back)', async () => {
    const { openStorage } = await import('../../src/petstore/storage.ts');
    const { statSync } = await import('node:fs');
    const dbPath = join(tmp.dir, 'creates.db');
    const storage = openStorage(dbPath);
    try {
      const sizes: number[] = [];
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 2000; i++)
          storage.createPet({ name: `Pet ${i}`, categoryId: 1n, status: 'available' });
        sizes.push(statSync(`${dbPath}-wal`).size);
      }
      // SQLite checkpoints every 1000 pages (4 MB) and journal_size_limit cuts the file back to 1 MB,
      // so the WAL never passes ~4 MB however many creates (it used to reach 26 MB by 3,000).
      for (const size of sizes) expect(size).toBeLessThan(4.5 * 1024 * 1024);
      expect(storage.countPets()).toBe(6000);
      const created = storage.createPet({ name: 'Last', categoryId: 7n });
      expect(storage.getPet(created.id)).toEqual(created);
    } finally {
      storage.close();
    }
  });
});
