// @tier unit

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalInt64 } from '../../src/contract/int64.ts';
import { parsePet, parsePets } from '../../src/upstream/bodies.ts';
import { parseJsonMarked } from '../../src/upstream/exact-json.ts';
import { oracleCanonicalInt64, oracleParsePet, oracleParsePets } from '../support/int64-oracle.ts';

// The one-parse exact reading of upstream bodies against the reviver-based one it replaced
// (test/support/int64-oracle.ts): same pets, same refusals, same messages, on random JSON text
// written token by token (whitespace, escapes, every form of number) and on broken copies of it.
// Fixed seed: the same cases every run.

const SEED = 424242;
const runs = (numRuns: number) => ({ seed: SEED, numRuns, endOnFailure: true });

const DEL = '\x7f';

type Outcome = { pets: unknown } | { refused: string };

function outcome(parse: () => unknown): Outcome {
  try {
    return { pets: parse() };
  } catch (error) {
    return { refused: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

// --- JSON text, token by token ---

const ws = fc.constantFrom('', '', '', '', ' ', '\n', '\t', '\r\n  ');

const sign = (digits: string) => fc.constantFrom(digits, `-${digits}`);

const number = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -100_000, max: 100_000 }).map(String) },
  { weight: 2, arbitrary: fc.constantFrom('0', '-0', '1', '-1', '42') },
  // Either side of 2^53, where a double stops holding every integer.
  {
    weight: 3,
    arbitrary: fc.bigInt({ min: 2n ** 53n - 40n, max: 2n ** 53n + 40n }).chain((n) => sign(String(n))),
  },
  // 15 to 20 digits, each length as likely: int64s and beyond.
  {
    weight: 8,
    arbitrary: fc
      .integer({ min: 15, max: 20 })
      .chain((digits) => fc.bigInt({ min: 10n ** BigInt(digits - 1), max: 10n ** BigInt(digits) - 1n }))
      .chain((n) => sign(String(n))),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '9223372036854775807',
      '-9223372036854775808',
      '9223372036854775808',
      '-9223372036854775809',
      '18446744073709551615',
      '123456789012345678901234567890',
      '9007199254740991',
      '-9007199254740991',
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '1.0',
      '1.5',
      '-0.0',
      '0.5',
      '1e3',
      '1E+2',
      '1e-2',
      '100e-2',
      '1e20',
      '1e400',
      '-1e400',
      '9007199254740993.0',
      '9007199254740991.4',
      '1.0000000000000001',
      '12345678901234567890.0',
      '123456789012345678e0',
      '-9223372036854775808.0',
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
        fc.option(fc.stringMatching(/^[0-9]{1,4}$/)),
        fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.nat(30))),
      )
      .map(
        ([int, frac, exp]) => `${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : exp.join('')}`,
      ),
  },
  // Not JSON numbers: the body must then be refused.
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '01',
      '-',
      '1.',
      '.5',
      '+1',
      '0123456789012345678',
      '1e',
      '--1',
      '1.e3',
      'NaN',
    ),
  },
);

/** An id as a snowflake-style upstream sends it: an int64, mostly beyond 2^53. */
const int64 = fc
  .oneof(
    { weight: 4, arbitrary: fc.bigInt({ min: 2n ** 53n, max: 2n ** 63n - 1n }) },
    { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }) },
  )
  .map(String);

/** Pieces of string content: characters to escape, DEL (the mark), and text that looks like JSON. */
const stringPiece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'Z', '0', '7', ' ', 'é', '€', '😀', '\u2028', '\ud800') },
  { weight: 3, arbitrary: fc.constantFrom('"', '\\', '\u0000', '\n', '\u001f', DEL, '/') },
  { weight: 3, arbitrary: fc.constantFrom(':', ',', '}', '{', ']', '[', '-', '.', 'e') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      ':12345678901234567890,',
      ': 9223372036854775807}',
      ':1.5,',
      ':-12345678901234567890 ',
      `${DEL}12345678901234567890`,
      `${DEL}.1.5`,
      '"id":12345678901234567890,',
      '\\u007f',
    ),
  },
  { weight: 2, arbitrary: fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String) },
);

/** How one character is written: raw when JSON allows it, or as a \u escape in either case. */
function writeChar(char: string, how: number): string {
  const code = char.charCodeAt(0);
  const mustEscape = char === '"' || char === '\\' || code < 0x20;
  if (!mustEscape && how < 2) return char;
  if (how === 1 && (char === '"' || char === '\\')) return `\\${char}`;
  if (how === 1 && char === '\n') return '\\n';
  const hex = code.toString(16).padStart(4, '0');
  return `\\u${how === 3 ? hex.toUpperCase() : hex}`;
}

const string = fc.array(fc.tuple(stringPiece, fc.nat(3)), { maxLength: 6 }).map(
  (pieces) =>
    `"${pieces
      .map(([piece, how]) =>
        Array.from(piece)
          .flatMap((char) => (char.length === 2 ? [char[0] as string, char[1] as string] : [char]))
          .map((unit) => writeChar(unit, how))
          .join(''),
      )
      .join('')}"`,
);

const key = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom('"id"', '"categoryId"', '"name"', '"status"', '"x"', '"owner"', '""'),
  },
  { weight: 1, arbitrary: fc.constantFrom('"i\\u0064"', '"categoryI\\u0064"', '"\\u007fid"', '"__proto__"') },
  { weight: 1, arbitrary: string },
);

const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: number },
    { weight: 4, arbitrary: string },
    { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null') },
    { weight: 1, arbitrary: tie('array') },
    { weight: 1, arbitrary: tie('object') },
  ),
  array: fc
    .array(fc.tuple(ws, tie('value') as fc.Arbitrary<string>, ws), { maxLength: 4 })
    .map((items) => `[${items.map((parts) => parts.join('')).join(',')}]`),
  object: fc
    .array(fc.tuple(ws, key, ws, ws, tie('value') as fc.Arbitrary<string>, ws), { maxLength: 4 })
    .map((members) => `{${members.map(([a, k, b, c, v, d]) => `${a}${k}${b}:${c}${v}${d}`).join(',')}}`),
})) as { value: fc.Arbitrary<string> };

const status = fc.constantFrom('"available"', '"pending"', '"sold"', 'null', '"lost"', '1', '"\\u0073old"');

/** Sometimes `arbitrary`, sometimes nothing. */
const maybe = <T>(arbitrary: fc.Arbitrary<T>, freq: number) => fc.option(arbitrary, { freq, nil: undefined });

/** A pet as an upstream might send it: mostly the contract's members, sometimes anything. */
const pet = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: int64 },
      { weight: 4, arbitrary: number },
      { weight: 1, arbitrary: value },
    ),
    fc.oneof({ weight: 8, arbitrary: string }, { weight: 1, arbitrary: value }),
    fc.oneof(
      { weight: 4, arbitrary: int64 },
      { weight: 4, arbitrary: number },
      { weight: 1, arbitrary: value },
    ),
    maybe(fc.oneof({ weight: 4, arbitrary: status }, { weight: 1, arbitrary: value }), 2),
    maybe(fc.tuple(key, value), 2),
    // A second id, categoryId or name: JSON.parse keeps the last.
    maybe(fc.tuple(fc.constantFrom('"id"', '"categoryId"', '"name"'), value), 12),
    fc.array(ws, { minLength: 18, maxLength: 18 }),
  )
  .chain(([id, name, categoryId, state, extra, again, spaces]) => {
    const members: Array<[string, string]> = [
      ['"id"', id],
      ['"name"', name],
      ['"categoryId"', categoryId],
    ];
    if (state !== undefined) members.push(['"status"', state]);
    if (extra !== undefined) members.push(extra);
    if (again !== undefined) members.push(again);
    const written = members.map(
      ([k, v], i) => `${spaces[3 * i]}${k}${spaces[3 * i + 1]}:${spaces[3 * i + 2]}${v}`,
    );
    return fc.shuffledSubarray(written, { minLength: written.length });
  })
  .map((members) => `{${members.join(',')}}`);

const body = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .array(fc.tuple(ws, pet, ws), { maxLength: 5 })
      .map((pets) => `[${pets.map((p) => p.join('')).join(',')}]`),
  },
  { weight: 3, arbitrary: fc.tuple(ws, pet, ws).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: value },
);

/** A body broken (or not) by one edit: a character dropped, added or changed, or the end cut off. */
const mutatedBody = fc
  .tuple(
    body,
    fc.nat(),
    fc.constantFrom('drop', 'insert', 'replace', 'cut'),
    fc.constantFrom('"', ':', ',', '0', '-', '.', 'e', DEL, '}', '\\', ' ', '1'),
  )
  .map(([text, at, edit, char]) => {
    const i = text.length === 0 ? 0 : at % text.length;
    if (edit === 'drop') return text.slice(0, i) + text.slice(i + 1);
    if (edit === 'insert') return text.slice(0, i) + char + text.slice(i);
    if (edit === 'replace') return text.slice(0, i) + char + text.slice(i + 1);
    return text.slice(0, i);
  });

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

// --- properties ---

describe('exact parse of upstream bodies: the same as the reviver-based one', () => {
  it('parsePets and parsePet on random bodies and on broken copies', () => {
    const seen = { accepted: 0, beyond53: 0, refused: 0, notJson: 0 };
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: body }, { weight: 1, arbitrary: mutatedBody }), (text) => {
        const list = outcome(() => parsePets(text));
        expect(list).toEqual(outcome(() => oracleParsePets(text)));
        expect(outcome(() => parsePet(text))).toEqual(outcome(() => oracleParsePet(text)));
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
