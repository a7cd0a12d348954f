// @tier unit

import { describe, expect, it } from 'vitest';
import { createLru } from '../../src/policy/lru.ts';

// The prepared operations and learned header sets are bounded: past the bound, the entry served
// least recently goes first, and a hit counts as a use.

describe('the prepared-operations LRU', () => {
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
});
