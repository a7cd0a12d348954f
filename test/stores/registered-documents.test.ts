// @tier integration

import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryDocumentStore,
  createRedisDocumentStore,
  type DocumentStore,
  type DocumentStoreBounds,
  entryBytes,
} from '../../src/stores/registered-documents.ts';
import { haveRedisServer, type RunningRedis, startRedis } from '../support/redis.ts';

// The APQ store's bounds, at their edges, in memory and in a real Redis: a caller registering
// documents can only make older registrations go first, never grow the store past its bounds.

const hashOf = (document: string) => createHash('sha256').update(document).digest('hex');
/** A document of exactly `bytes` bytes with its hash (64 hex characters) counted in. */
const documentOf = (tag: string, bytes: number) => {
  const body = `{ pets { id } } # ${tag}`;
  return body.padEnd(bytes - 64, 'x');
};

async function present(store: DocumentStore, documents: string[]): Promise<boolean[]> {
  const found: boolean[] = [];
  for (const document of documents) found.push((await store.get(hashOf(document))) === document);
  return found;
}

/** The same edge cases for every store. */
function boundsSuite(name: string, make: (bounds: DocumentStoreBounds) => Promise<DocumentStore>) {
  describe(name, () => {
    it('holds exactly maxDocuments; one more evicts the least recently used', async () => {
      const store = await make({ maxDocuments: 3, maxBytes: 1_000_000 });
      const docs = ['a', 'b', 'c', 'd'].map((tag) => documentOf(tag, 100));
      for (const doc of docs.slice(0, 3)) await store.set(hashOf(doc), doc);
      expect(await present(store, docs.slice(0, 3))).toEqual([true, true, true]);
      // 'a' was read first above, so 'a' is the least recently used one.
      await store.set(hashOf(docs[3] as string), docs[3] as string);
      expect(await present(store, docs)).toEqual([false, true, true, true]);
      await store.close();
    });

    it('a read makes a document the most recently used', async () => {
      const store = await make({ maxDocuments: 2, maxBytes: 1_000_000 });
      const [a, b, c] = ['a', 'b', 'c'].map((tag) => documentOf(tag, 100)) as [string, string, string];
      await store.set(hashOf(a), a);
      await store.set(hashOf(b), b);
      expect(await store.get(hashOf(a))).toBe(a);
      await store.set(hashOf(c), c);
      expect(await present(store, [a, b, c])).toEqual([true, false, true]);
      await store.close();
    });

    it('holds exactly maxBytes; one byte more evicts until the new document fits', async () => {
      const store = await make({ maxDocuments: 100, maxBytes: 1000 });
      const four = ['a', 'b', 'c', 'd'].map((tag) => documentOf(tag, 250));
      expect(four.map((doc) => entryBytes(hashOf(doc), doc))).toEqual([250, 250, 250, 250]);
      for (const doc of four) {
        await store.set(hashOf(doc), doc);
      }
      expect(await present(store, four)).toEqual([true, true, true, true]);
      const one = documentOf('e', 65);
      await store.set(hashOf(one), one);
      expect(await present(store, [...four, one])).toEqual([false, true, true, true, true]);
      await store.close();
    });

    it('stores a document of exactly maxBytes alone, and never one byte larger', async () => {
      const store = await make({ maxDocuments: 100, maxBytes: 1000 });
      const small = documentOf('small', 100);
      await store.set(hashOf(small), small);
      const tooLarge = documentOf('too large', 1001);
      await store.set(hashOf(tooLarge), tooLarge);
      expect(await present(store, [small, tooLarge])).toEqual([true, false]);
      const exact = documentOf('exact', 1000);
      await store.set(hashOf(exact), exact);
      expect(await present(store, [small, exact])).toEqual([false, true]);
      await store.close();
    });

    it('counts bytes as UTF-8, not characters', async () => {
      const store = await make({ maxDocuments: 100, maxBytes: 1000 });
      // 400 two-byte characters: 800 bytes plus the hash, over 1000 only when counted as bytes.
      const wide = `{ pets { id } } # ${'é'.repeat(470)}`;
      expect(wide.length).toBeLessThan(1000 - 64);
      await store.set(hashOf(wide), wide);
      expect(await store.get(hashOf(wide))).toBeUndefined();
      await store.close();
    });

    it('registering the same document again neither duplicates it nor evicts another', async () => {
      const store = await make({ maxDocuments: 2, maxBytes: 1_000_000 });
      const [a, b] = ['a', 'b'].map((tag) => documentOf(tag, 100)) as [string, string];
      await store.set(hashOf(a), a);
      await store.set(hashOf(b), b);
      for (let i = 0; i < 3; i++) await store.set(hashOf(a), a);
      expect(await present(store, [a, b])).toEqual([true, true]);
      expect(store.stats.registered).toBe(2);
      await store.close();
    });
  });
}

boundsSuite('memory store', async (bounds) => createMemoryDocumentStore(bounds));

const redisAvailable = haveRedisServer('registered-documents.test');

describe.skipIf(!redisAvailable)('Redis store', () => {
  let redis: RunningRedis;
  let prefixes = 0;
  const stores: DocumentStore[] = [];

  /** Waits for the background connection, so the first command is not a miss. */
  async function connected(store: DocumentStore) {
    for (let i = 0; i < 100; i++) {
      const before = store.stats.errors;
      await store.get('0'.repeat(64));
      if (store.stats.errors === before) return store;
      await sleep(20);
    }
    throw new Error('Redis store never connected');
  }

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterAll(async () => {
    for (const store of stores) await store.close();
    await redis?.stop();
  });

  boundsSuite('bounds, in one Lua script', async (bounds) => {
    const store = createRedisDocumentStore(redis.url, { ...bounds, prefix: `test:${prefixes++}` });
    stores.push(store);
    return connected(store);
  });

  it('two instances share registrations and one bound', async () => {
    const prefix = `test:${prefixes++}`;
    const a = await connected(createRedisDocumentStore(redis.url, { maxDocuments: 2, prefix }));
    const b = await connected(createRedisDocumentStore(redis.url, { maxDocuments: 2, prefix }));
    stores.push(a, b);
    const docs = ['a', 'b', 'c'].map((tag) => documentOf(tag, 100));
    await a.set(hashOf(docs[0] as string), docs[0] as string);
    await b.set(hashOf(docs[1] as string), docs[1] as string);
    expect(await present(b, docs.slice(0, 2))).toEqual([true, true]);
    await a.set(hashOf(docs[2] as string), docs[2] as string);
    expect(await present(b, docs)).toEqual([false, true, true]);
  });

  it('with Redis gone, a lookup is a miss and a registration is lost: counted, never thrown', async () => {
    const gone = await startRedis();
    const store = await connected(createRedisDocumentStore(gone.url, { prefix: 'test:gone' }));
    stores.push(store);
    const doc = documentOf('kept', 100);
    await store.set(hashOf(doc), doc);
    expect(await store.get(hashOf(doc))).toBe(doc);
    await gone.kill();
    const errors = store.stats.errors;
    await expect(store.get(hashOf(doc))).resolves.toBeUndefined();
    await expect(store.set(hashOf('x'), 'x')).resolves.toBeUndefined();
    expect(store.stats.errors).toBeGreaterThan(errors);
  });

  it('with Redis frozen, a lookup is a miss after the command timeout', async () => {
    const frozen = await startRedis();
    const store = await connected(
      createRedisDocumentStore(frozen.url, { prefix: 'test:frozen', commandTimeoutMs: 100 }),
    );
    stores.push(store);
    frozen.pause();
    try {
      await expect(store.get('1'.repeat(64))).resolves.toBeUndefined();
      expect(store.stats.errors).toBeGreaterThan(0);
    } finally {
      frozen.resume();
      await frozen.stop();
    }
  });
});
