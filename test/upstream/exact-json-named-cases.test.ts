// @tier unit

import { describe, expect, it } from 'vitest';
import { parsePet, parsePets } from '../../src/upstream/bodies.ts';
import { parseJsonMarked } from '../../src/upstream/exact-json.ts';
import { oracleParsePets } from '../support/int64-oracle.ts';
import { DEL, outcome } from './json-bodies.ts';

// The one-parse exact reading of upstream bodies on the cases worth naming: each against the
// reviver-based one it replaced (test/support/int64-oracle.ts), then what it keeps and refuses.

describe('exact parse of upstream bodies: cases worth naming', () => {
  const BIG = '12345678901234567890'; // beyond int64
  const ID = '1234567890123456789';
  const CATEGORY = '9223372036854775807';

  it.each([
    ['ids beyond 2^53, exact', `[{"id":${ID},"name":"a","categoryId":${CATEGORY}}]`],
    ['int64 min', `[{"id":-9223372036854775808,"name":"a","categoryId":1}]`],
    ['one beyond int64 max', `[{"id":9223372036854775808,"name":"a","categoryId":1}]`],
    ['a string that looks like a mark, raw', `[{"id":"${DEL}${ID}","name":"a","categoryId":${ID}}]`],
    ['a string that looks like a mark, escaped', `[{"id":"\\u007F${ID}","name":"a","categoryId":${ID}}]`],
    ['a name that looks like a mark', `[{"id":${ID},"name":"${DEL}${ID}","categoryId":1}]`],
    ['a long number as the name', `[{"id":${ID},"name":${BIG},"categoryId":1}]`],
    ['a long number as the status', `[{"id":${ID},"name":"a","categoryId":1,"status":${BIG}}]`],
    ['a colon and a long number inside a string', `[{"id":${ID},"name":"a:${ID},b","categoryId":1}]`],
    ['an escaped quote before a colon', `[{"id":${ID},"name":"a\\":${ID},","categoryId":1}]`],
    ['1.0 as an id, every id small', `[{"id":1.0,"name":"a","categoryId":1e3}]`],
    [
      '1.0 as an id, another id beyond 2^53',
      `[{"id":${ID},"name":"a","categoryId":1},{"id":1.0,"name":"b","categoryId":1}]`,
    ],
    ['-0 as an id beside a long one', `[{"id":-0,"name":"a","categoryId":${ID}}]`],
    ['a leading zero (not JSON)', `[{"id":0${ID},"name":"a","categoryId":1}]`],
    ['a long number as a key (not JSON)', `[{${ID}:1,"id":${ID},"name":"a","categoryId":1}]`],
    ['a duplicate id, the last one wins', `[{"id":${ID},"id":7,"name":"a","categoryId":${ID}}]`],
  ])('%s', (_name, text) => {
    expect(outcome(() => parsePets(text))).toEqual(outcome(() => oracleParsePets(text)));
  });

  it('keeps every digit and refuses what is not an int64', () => {
    expect(parsePets(`[{"id":${ID},"name":"a","categoryId":${CATEGORY},"status":"sold"}]`)).toEqual([
      { id: ID, name: 'a', categoryId: CATEGORY, status: 'sold' },
    ]);
    expect(parsePet(`{"id":-0,"name":"a","categoryId":${ID}}`)).toEqual({
      id: '0',
      name: 'a',
      categoryId: ID,
    });
    expect(() => parsePets(`[{"id":"${DEL}${ID}","name":"a","categoryId":${ID}}]`)).toThrow(
      'int64 field is not an integer',
    );
    expect(() => parsePets(`[{"id":${ID},"name":${BIG},"categoryId":1}]`)).toThrow(
      'pet name is not a string',
    );
    expect(() => parsePets(`[{"id":${BIG},"name":"a","categoryId":1}]`)).toThrow(
      'int64 field is not an integer',
    );
  });

  it('gives no marks when the text holds DEL, raw or escaped, or when a rewrite landed in a string', () => {
    expect(parseJsonMarked(`{"id":${ID},"name":"a","categoryId":1.5}`)).toEqual({
      value: { id: `${DEL}${ID}`, name: 'a', categoryId: `${DEL}.1.5` },
    });
    expect(parseJsonMarked(`{"id":${ID},"name":"${DEL}","categoryId":1}`)).toBeUndefined();
    expect(parseJsonMarked(`{"id":${ID},"name":"\\u007F","categoryId":1}`)).toBeUndefined();
    // An escaped backslash, then the letters u007F: no DEL.
    expect(parseJsonMarked(`{"id":${ID},"name":"\\\\u007F","categoryId":1}`)).toBeDefined();
    expect(parseJsonMarked(`{"id":${ID},"name":"a:${ID},","categoryId":1}`)).toBeUndefined();
    // No long integer: a plain parse is exact.
    expect(parseJsonMarked(`{"id":1,"name":"a","categoryId":1.5}`)).toBeUndefined();
  });
});
