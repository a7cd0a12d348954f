// @tier unit

import { describe, expect, it } from 'vitest';
import { createAcceptedKeys } from '../../src/policy/accepted-keys.ts';
import { createLocalCallerKey } from '../../src/upstream/caller-key.ts';

const ALICE = 'Bearer alice-key-0123456789';
const BOB = 'Bearer bob-key-0123456789';

describe('the keys the upstream accepted', () => {
  it('remembers a key after a 2xx, forgets it after a 401, and tells keys apart', () => {
    const keys = createAcceptedKeys();
    expect(keys.has(ALICE)).toBe(false);
    keys.observer.keyAnswered?.(ALICE, true);
    expect([keys.has(ALICE), keys.has(BOB)]).toEqual([true, false]);
    keys.observer.keyAnswered?.(ALICE, false);
    expect(keys.has(ALICE)).toBe(false);
  });

  it('without fromEveryAnswer, remembers only what it is told to accept, and still forgets on a 401', () => {
    const keys = createAcceptedKeys({ fromEveryAnswer: false });
    keys.observer.keyAnswered?.(ALICE, true);
    expect(keys.has(ALICE)).toBe(false);
    keys.accept(ALICE);
    keys.accept(BOB);
    expect([keys.has(ALICE), keys.has(BOB)]).toEqual([true, true]);
    keys.observer.keyAnswered?.(ALICE, false);
    expect([keys.has(ALICE), keys.has(BOB)]).toEqual([false, true]);
  });

  it('names callers by a salted hash of this process: never the key, and another memory names them apart', () => {
    const name = createLocalCallerKey();
    expect(name(ALICE)).toBe(name(ALICE));
    expect(name(ALICE)).not.toBe(name(BOB));
    expect(name(ALICE)).not.toContain('alice');
    expect(name(ALICE)).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(createLocalCallerKey()(ALICE)).not.toBe(name(ALICE));
  });
});
