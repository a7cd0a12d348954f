// @tier unit

import { describe, expect, it } from 'vitest';
import { createLru } from '../../src/stores/lru.ts';

// The caches keyed by documents and the learned header sets are bounded: past a bound, the entry
// served least recently goes first, and a hit counts as a use.

describe('the LRU', () => {
  it('holds at most its bound, forgetting the least recently used entry first', () => {
    const lru = createLru<number>(3);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    expect(lru.get('a')).toBe(1); // 'b' is now the stalest
    lru.set('d', 4);
    expect(lru.size).toBe(3);
    expect(lru.get('b')).toBeUndefined();
    expect([lru.get('a'), lru.get('c'), lru.get('d')]).toEqual([1, 3, 4]);
  });

  it('replaces a value without growing, and counts the replacement as a use', () => {
    const lru = createLru<string>(2);
    lru.set('a', 'old');
    lru.set('b', 'b');
    lru.set('a', 'new');
    lru.set('c', 'c');
    expect(lru.size).toBe(2);
    expect(lru.get('a')).toBe('new');
    expect(lru.get('b')).toBeUndefined();
  });

  it('holds at most its bytes as its entries are weighed, and never an entry heavier than all of them', () => {
    const lru = createLru<string>({ entries: 100, bytes: 10 }, (key, value) => key.length + value.length);
    lru.set('a', 'aaa'); // 4
    lru.set('b', 'bbb'); // 8
    lru.get('a'); // 'b' is now the stalest
    lru.set('c', 'ccc'); // 12: 'b' goes
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual(['aaa', undefined, 'ccc']);
    expect(lru.bytes).toBe(8);
    lru.set('a', 'a'.repeat(8)); // heavier, in place: 13, so 'c' goes
    expect([lru.size, lru.bytes, lru.get('c')]).toEqual([1, 9, undefined]);
    lru.set('a', 'a'.repeat(10)); // 11 alone: not kept, and its older value goes
    expect([lru.size, lru.bytes, lru.get('a')]).toEqual([0, 0, undefined]);
  });
});
