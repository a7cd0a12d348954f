// @tier unit

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalInt64 } from '../../src/contract/int64.ts';
import { parsePet, parsePets } from '../../src/upstream/bodies.ts';
import { parseJsonMarked } from '../../src/upstream/exact-json.ts';
import { oracleCanonicalInt64, oracleParsePet, oracleParsePets } from '../support/int64-oracle.ts';
import { body, DEL, mutatedBody, outcome } from './json-bodies.ts';

// The one-parse exact reading of upstream bodies against the reviver-based one it replaced
// (test/support/int64-oracle.ts): same pets, same refusals, same messages, on random JSON text
// written token by token (whitespace, escapes, every form of number) and on broken copies of it.
// Fixed seed: the same cases every run.

const SEED = 424242;
const runs = (numRuns: number) => ({ seed: SEED, numRuns, endOnFailure: true });

/** What parseJsonMarked must give for valid JSON: JSON.parse with the marks a reviver can place. */
function markedByReviver(text: string): unknown {
  return JSON.parse(text, function (this: unknown, _key, parsed, context?: { source?: string }) {
    const source = context?.source;
    if (typeof parsed !== 'number' || Array.isArray(this) || source === undefined) return parsed;
    if (/[.eE]/.test(source)) return `${DEL}.${source}`;
    return source.replace('-', '').length >= 16 ? `${DEL}${source}` : parsed;
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('exact parse of upstream bodies: the same as the reviver-based one', () => {
  it('parsePets and parsePet on random bodies and on broken copies', () => {
    const seen = { accepted: 0, beyond53: 0, refused: 0, notJson: 0 };
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: body }, { weight: 1, arbitrary: mutatedBody }), (text) => {
        // Whichever way is tried first (the guess of small or long ids), the same result.
        const list = outcome(() => parsePets(text, { long: false }));
        expect(list).toEqual(outcome(() => oracleParsePets(text)));
        expect(outcome(() => parsePets(text, { long: true }))).toEqual(list);
        const pet = outcome(() => parsePet(text, { long: false }));
        expect(pet).toEqual(outcome(() => oracleParsePet(text)));
        expect(outcome(() => parsePet(text, { long: true }))).toEqual(pet);
        if ('pets' in list) {
          seen.accepted++;
          const ids = (list.pets as Array<{ id: string; categoryId: string }>).flatMap((p) => [
            p.id,
            p.categoryId,
          ]);
          if (ids.some((id) => !Number.isSafeInteger(Number(id)))) seen.beyond53++;
        } else if (list.refused.endsWith('body is not JSON')) {
          seen.notJson++;
        } else {
          seen.refused++;
        }
      }),
      runs(10_000),
    );
    // The cases reach every outcome, not only refusals.
    expect(seen.accepted).toBeGreaterThan(500);
    expect(seen.beyond53).toBeGreaterThan(200);
    expect(seen.refused).toBeGreaterThan(5_000);
    expect(seen.notJson).toBeGreaterThan(2_000);
  });

  it('parseJsonMarked marks exactly the numbers a reviver sees as long integers or fractions', () => {
    let marked = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: body }, { weight: 1, arbitrary: mutatedBody }), (text) => {
        const result = parseJsonMarked(text);
        if (!isJson(text)) {
          expect(result).toBeUndefined();
          return;
        }
        if (result === undefined) return;
        marked++;
        expect(result.value).toEqual(markedByReviver(text));
      }),
      runs(10_000),
    );
    expect(marked).toBeGreaterThan(1_500);
  });

  it('canonicalInt64 on random text', () => {
    const digits = fc.stringMatching(/^-?[0-9]{1,22}$/);
    const nearBounds = fc
      .tuple(
        fc.constantFrom(2n ** 63n, 2n ** 53n, 10n ** 18n, 10n ** 19n),
        fc.integer({ min: -3, max: 3 }),
        fc.boolean(),
      )
      .map(([bound, delta, negative]) => String((negative ? -bound : bound) + BigInt(delta)));
    const other = fc.oneof(
      fc.string({ maxLength: 22 }),
      fc.constantFrom('', '-', '-0', '0', '00', '007', '+1', ' 1', '1 ', '1e3', '1.0', '١٢', '0x1F'),
    );
    fc.assert(
      fc.property(fc.oneof(digits, nearBounds, other), (text) => {
        expect(canonicalInt64(text)).toBe(oracleCanonicalInt64(text));
      }),
      runs(20_000),
    );
  });
});

describe('the guess of which way a body is read first', () => {
  const small = '[{"id":1,"name":"a","categoryId":2}]';
  const long = '[{"id":1234567890123456789,"name":"a","categoryId":2}]';

  it('follows the bodies: long after a body a plain parse would round, small after one it would not', () => {
    const guess = { long: false };
    expect(parsePets(small, guess)).toEqual([{ id: '1', name: 'a', categoryId: '2' }]);
    expect(guess.long).toBe(false);
    expect(parsePets(long, guess)).toEqual([{ id: '1234567890123456789', name: 'a', categoryId: '2' }]);
    expect(guess.long).toBe(true);
    expect(parsePets(long, guess)[0]?.id).toBe('1234567890123456789');
    expect(guess.long).toBe(true);
    expect(parsePets(small, guess)).toEqual([{ id: '1', name: 'a', categoryId: '2' }]);
    expect(guess.long).toBe(false);
  });

  it('reads a 16-digit safe id the same either way, and keeps guessing long on it', () => {
    const safe16 = '[{"id":1000000000000000,"name":"a","categoryId":2}]';
    const guess = { long: true };
    expect(parsePets(safe16, guess)).toEqual(parsePets(safe16, { long: false }));
    expect(guess.long).toBe(true);
  });

  it('refuses a body that is not JSON the same way either way', () => {
    expect(() => parsePets('[{"id":1', { long: false })).toThrow('body is not JSON');
    expect(() => parsePets('[{"id":1', { long: true })).toThrow('body is not JSON');
  });
});
