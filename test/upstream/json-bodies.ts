import fc from 'fast-check';

// Upstream bodies as JSON text, written token by token (whitespace, escapes, every form of number),
// pets as an upstream might send them, and broken copies; and what a parse of one gives.

/** The mark parseJsonMarked puts before a number it keeps as text. */
export const DEL = '\x7f';

export type Outcome = { pets: unknown } | { refused: string };

/** What a parse gives: its value, or its error's name and message. */
export function outcome(parse: () => unknown): Outcome {
  try {
    return { pets: parse() };
  } catch (error) {
    return { refused: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

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

/** A body as an upstream might send it: mostly a list of pets, else one pet, else any JSON value. */
export const body = fc.oneof(
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
export const mutatedBody = fc
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
