/**
 * One plain JSON.parse that keeps the text of the numbers a double may not hold. A reviver reading
 * `context.source` does that too, but costs several plain parses, and with snowflake-style ids every
 * body needs it. Here the text is rewritten first, each such member value `"id": 1234567890123456789`
 * becoming a marked string `"id": "\x7f1234567890123456789"`, and the engine's parser does the rest.
 *
 * The rewrite looks at what follows each colon without tracking strings: one native `indexOf` per
 * colon costs far less than a JavaScript loop over every character (docs/performance.md). A colon inside a string can then be taken for a
 * member's, but the result is not valid JSON: the inserted quote closes that string and the raw DEL
 * after it cannot stand outside one. And a string is valid wherever a member's value is. So the
 * rewritten text parses only if the original does and every rewrite replaced a member's value, and
 * then it differs from a plain parse only by those marks.
 */

/**
 * First character of a marked number. DEL is one byte, so the rewritten text stays one-byte (the
 * engine's fastest case), and is invalid outside a string, which keeps a misplaced rewrite from
 * parsing. Inside a string it is valid, so a text that holds one (raw or as `\u007f`) gets no marks:
 * an upstream string must never pass for a number.
 */
const MARK = '\x7f';
const MARK_CODE = 0x7f;
/** After MARK, says that the number has a fraction or an exponent. */
const FRACTION_CODE = 0x2e;
const OPEN_INTEGER = `"${MARK}`;
const OPEN_FRACTION = `"${MARK}.`;

// 2^53 has 16 digits: an integer literal with fewer is a safe integer, which a double holds exactly.
const LONG_DIGITS = 16;

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const LOWER_F = 0x66;
const LOWER_U = 0x75;
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

/**
 * `JSON.parse(text)` in which every number that is an object member's value and is an integer of 16+
 * digits, or has a fraction or an exponent, is a marked string (see {@link isMarked},
 * {@link markedText}); every other value is as JSON.parse gives it. Fractions are marked too because
 * a double loses their text (`1.0` and `1` parse alike). Undefined, and the caller parses the text its
 * own way, when there is no long integer (a plain parse is then exact), when the text holds DEL (raw
 * or escaped), or when the rewritten text does not parse (the text is not JSON, or a colon inside a
 * string was taken for a member's). Never throws.
 */
export function parseJsonMarked(text: string): { readonly value: unknown } | undefined {
  let marked = '';
  let copied = 0;
  let long = false;
  for (let colon = text.indexOf(':'); colon !== -1; colon = text.indexOf(':', colon + 1)) {
    let start = colon + 1;
    let c = text.charCodeAt(start);
    while (c === SPACE || c === LF || c === CR || c === TAB) c = text.charCodeAt(++start);
    if (c !== MINUS && !isDigit(c)) continue;
    const digits = c === MINUS ? start + 1 : start;
    let end = digits;
    while (isDigit(text.charCodeAt(end))) end++;
    // No digit, or a leading zero: not a JSON number, and left so.
    if (end === digits || (end - digits > 1 && text.charCodeAt(digits) === ZERO)) continue;
    c = text.charCodeAt(end);
    const fraction = c === DOT || c === LOWER_E || c === UPPER_E;
    if (fraction) {
      end = fractionEnd(text, end);
      if (end === -1) continue;
    } else if (end - digits < LONG_DIGITS) {
      continue;
    }
    if (!closesValue(text.charCodeAt(end))) continue;
    if (!fraction) long = true;
    // Grouped so that each number adds one small subtree: JSON.parse first flattens the string, and
    // one long chain of single pieces flattens slower.
    marked +=
      text.slice(copied, start) +
      ((fraction ? OPEN_FRACTION : OPEN_INTEGER) + (text.slice(start, end) + '"'));
    copied = end;
    colon = end - 1;
  }
  // Without a long integer a plain parse keeps every integer exactly: the caller parses it so.
  if (!long || mayHoldMark(text)) return undefined;
  try {
    return { value: JSON.parse(marked + text.slice(copied)) };
  } catch {
    return undefined;
  }
}

/**
 * Whether `value` is a marked number. Only meaningful on a value from {@link parseJsonMarked}:
 * elsewhere, a string may start with DEL.
 */
export function isMarked(value: unknown): value is string {
  return typeof value === 'string' && value.charCodeAt(0) === MARK_CODE;
}

/** The exact text of the number a marked string stands for. */
export function markedText(marked: string): string {
  return marked.slice(marked.charCodeAt(1) === FRACTION_CODE ? 2 : 1);
}

/**
 * Whether a marked number is an integer literal, then `-?[1-9][0-9]{15,}`, rather than a number with
 * a fraction or an exponent.
 */
export function isMarkedInteger(marked: string): boolean {
  return marked.charCodeAt(1) !== FRACTION_CODE;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** End of the fraction and exponent that start at `at`, or -1 if they are malformed (left invalid). */
function fractionEnd(text: string, at: number): number {
  let i = at;
  if (text.charCodeAt(i) === DOT) {
    const first = ++i;
    while (isDigit(text.charCodeAt(i))) i++;
    if (i === first) return -1;
  }
  let c = text.charCodeAt(i);
  if (c === LOWER_E || c === UPPER_E) {
    c = text.charCodeAt(++i);
    if (c === PLUS || c === MINUS) i++;
    const first = i;
    while (isDigit(text.charCodeAt(i))) i++;
    if (i === first) return -1;
  }
  return i;
}

/**
 * Whether `c` may follow a member value. Requiring it keeps a colon inside a string, as in
 * `"at 10:30.5"`, from being taken for a member's, so such text need not fall back.
 */
function closesValue(c: number): boolean {
  return c === COMMA || c === CLOSE_BRACE || c === SPACE || c === LF || c === CR || c === TAB;
}

/**
 * Whether a string in the text may start with DEL, raw or escaped as `\u007f`, and so pass for a mark.
 * Errs on the safe side: a DEL anywhere counts. Steps over escapes two characters at a time, so `\\`
 * followed by `u007f` (a backslash, then letters) does not count.
 */
function mayHoldMark(text: string): boolean {
  if (text.indexOf(MARK) !== -1) return true;
  for (let at = text.indexOf('\\'); at !== -1; at = text.indexOf('\\', at + 2)) {
    if (
      text.charCodeAt(at + 1) === LOWER_U &&
      text.startsWith('007', at + 2) &&
      (text.charCodeAt(at + 5) | 0x20) === LOWER_F
    ) {
      return true;
    }
  }
  return false;
}
