import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { PET_STATUSES } from '../contract/animal-store.ts';
import type { MessageDto, NewPetDto, PetDto, PetStatus } from './model.ts';

/** Synchronous access to the service's SQLite database; every method is one transaction. */
export interface Storage {
  listPets(limit: number, status?: PetStatus): PetDto[];
  createPet(pet: NewPetDto): PetDto;
  getPet(id: bigint): PetDto | undefined;
  /** removes the pet; false when there was none (no contract route removes one yet: a test's does) */
  deletePet(id: bigint): boolean;
  countPets(): number;
  /** inserts `pets` only when the pets table is empty; returns how many were inserted */
  seedPets(pets: readonly NewPetDto[]): number;
  /** creates the account when it does not exist yet and attaches a key (by its hash) */
  addKey(account: string, keyHash: string): void;
  hasKeys(): boolean;
  hasKeyHash(keyHash: string): boolean;
  saveMessage(message: MessageDto): void;
  close(): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS pets (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  category_id INTEGER NOT NULL,
  status TEXT CHECK (status IN (${PET_STATUSES.map((status) => `'${status}'`).join(', ')}))
);
CREATE INDEX IF NOT EXISTS pets_status ON pets (status, id);
CREATE TABLE IF NOT EXISTS accounts (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts (id),
  key_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
  id TEXT PRIMARY KEY,
  message TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL
);
`;

interface PetRow {
  id: bigint;
  name: string;
  category_id: bigint;
  status: PetStatus | null;
}

function toPet(row: PetRow): PetDto {
  const pet: PetDto = { id: row.id, name: row.name, categoryId: row.category_id };
  if (row.status !== null) pet.status = row.status;
  return pet;
}

/**
 * Opens (creating when needed) the database at `dbPath` (a file, or ':memory:').
 * WAL with synchronous=FULL: a create is acknowledged only after its commit reached the disk, so it
 * survives a crash or power loss, not just a clean restart; at this service's scale the extra fsync is cheap.
 */
export function openStorage(dbPath: string): Storage {
  const db = openDatabase(dbPath);
  const statements = prepareStatements(db);
  const count = (): number => Number((statements.countPets.get() as { n: bigint }).n);
  const create = (pet: NewPetDto): PetDto => {
    const { lastInsertRowid } = statements.insertPet.run(pet.name, pet.categoryId, pet.status ?? null);
    // The row as stored: the columns are exactly what was inserted, and the id SQLite chose.
    return toPet({
      id: BigInt(lastInsertRowid),
      name: pet.name,
      category_id: BigInt(pet.categoryId),
      status: pet.status ?? null,
    });
  };

  return {
    listPets(limit, status) {
      const rows =
        status === undefined ? statements.listAll.all(limit) : statements.listByStatus.all(status, limit);
      return (rows as unknown as PetRow[]).map(toPet);
    },
    createPet: create,
    getPet(id) {
      const row = statements.selectPet.get(id) as unknown as PetRow | undefined;
      return row === undefined ? undefined : toPet(row);
    },
    deletePet: (id) => Number(statements.deletePet.run(id).changes) > 0,
    countPets: count,
    seedPets(pets) {
      return transaction(db, () => {
        if (count() > 0) return 0;
        for (const pet of pets) create(pet);
        return pets.length;
      });
    },
    addKey(account, keyHash) {
      transaction(db, () => {
        const now = new Date().toISOString();
        statements.insertAccount.run(account, now);
        const { id } = statements.selectAccount.get(account) as { id: bigint };
        statements.insertKey.run(id, keyHash, now);
      });
    },
    hasKeys: () => statements.anyKey.get() !== undefined,
    hasKeyHash: (keyHash) => statements.keyByHash.get(keyHash) !== undefined,
    saveMessage(message) {
      statements.insertMessage.run(message.id, message.message, message.status, message.createdAt);
    },
    close() {
      if (db.isOpen) db.close();
    },
  };
}

/**
 * Makes `dir` and its missing parents one level at a time. Node's `mkdirSync(…, { recursive: true })`
 * spins forever where a parent exists but refuses children with ENOENT (under /proc), so the start
 * would hang instead of failing with its one line.
 */
export function makeDirectory(dir: string): void {
  const parent = dirname(dir);
  if (parent !== dir) {
    try {
      if (statSync(dir).isDirectory()) return;
    } catch {
      makeDirectory(parent);
    }
  }
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(dir).isDirectory()) throw error;
  }
}

function openDatabase(dbPath: string): DatabaseSync {
  if (dbPath !== ':memory:') makeDirectory(dirname(dbPath));
  const db = new DatabaseSync(dbPath);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  // After each checkpoint the WAL file is cut back to 1 MB, so a burst leaves no large file behind.
  db.exec('PRAGMA journal_size_limit = 1048576');
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec(SCHEMA);
  return db;
}

/** Every statement the storage runs, prepared once; integers read as bigint. */
function prepareStatements(db: DatabaseSync) {
  const prepare = (sql: string): StatementSync => {
    const stmt = db.prepare(sql);
    stmt.setReadBigInts(true);
    return stmt;
  };
  return {
    listAll: prepare('SELECT id, name, category_id, status FROM pets ORDER BY id LIMIT ?'),
    listByStatus: prepare(
      'SELECT id, name, category_id, status FROM pets WHERE status = ? ORDER BY id LIMIT ?',
    ),
    // Not `RETURNING` through `.get()`: a statement stepped once and not to its end keeps its read
    // transaction open, so no checkpoint could ever reset the WAL under create-only traffic.
    insertPet: prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)'),
    selectPet: prepare('SELECT id, name, category_id, status FROM pets WHERE id = ?'),
    deletePet: prepare('DELETE FROM pets WHERE id = ?'),
    countPets: prepare('SELECT count(*) AS n FROM pets'),
    insertAccount: prepare(
      'INSERT INTO accounts (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
    ),
    selectAccount: prepare('SELECT id FROM accounts WHERE name = ?'),
    insertKey: prepare('INSERT INTO api_keys (account_id, key_hash, created_at) VALUES (?, ?, ?)'),
    anyKey: prepare('SELECT 1 AS one FROM api_keys LIMIT 1'),
    keyByHash: prepare('SELECT 1 AS one FROM api_keys WHERE key_hash = ?'),
    insertMessage: prepare('INSERT INTO messages (id, message, status, created_at) VALUES (?, ?, ?, ?)'),
  };
}

function transaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
