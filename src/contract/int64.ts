import { INT64_MAX, INT64_MIN } from './animal-store.ts';

/*
 * Every id of the contract is an int64, which a JavaScript number cannot hold past 2^53: ids are
 * decimal strings end to end. Each way an int64 is read lives here, for the gateway's arguments,
 * the upstream's answers and the fast lane's variables alike.
 */

/** An optional sign and ASCII digits: `\d` without the `u` flag matches 0-9 only. */
const SIGNED_DIGITS = /^([+-]?)0*(\d+)$/;
/** Digits of INT64_MIN's magnitude: anything longer, leading zeros dropped, is out of range. */
const INT64_DIGITS = 19;
/**
 * Reads an int64 as a person may type it: surrounding whitespace, a `+` sign and leading zeros are
 * accepted and dropped (`" +007 "` is 7), as the REST service itself reads `GET /pets/007`.
 * Fractions (`7.0`), exponents (`1e3`), hex, digit separators and non-ASCII digits are refused:
 * each either is not an integer or can be misread. Returns the canonical decimal form (no sign for
 * positives, no leading zeros, `0` for `-0`), which is what goes upstream, or why there is none.
 */
export function parseInt64Input(text: string): { value: string } | { problem: 'syntax' | 'range' } {
  const match = SIGNED_DIGITS.exec(text.trim());
  if (!match) return { problem: 'syntax' };
  const [, sign, digits = ''] = match;
  // Checked before BigInt: a 10,000-digit string would otherwise be converted to be refused.
  if (digits.length > INT64_DIGITS) return { problem: 'range' };
  const value = sign === '-' ? -BigInt(digits) : BigInt(digits);
  if (value < INT64_MIN || value > INT64_MAX) return { problem: 'range' };
  return { value: value.toString() };
}

const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/;
const INT64_MIN_TEXT = String(INT64_MIN);
const INT64_MAX_TEXT = String(INT64_MAX);

/** Canonical decimal form of an int64 literal, or undefined if it is not one. */
export function canonicalInt64(text: string): string | undefined {
  return INTEGER_LITERAL.test(text) ? int64OfLiteral(text) : undefined;
}

/**
 * `canonicalInt64` of a string already known to match INTEGER_LITERAL. Such a literal has no leading
 * zero, so it is its own canonical form (but `-0`), and its length says whether it is in range but
 * at the bounds' own length, where strings of digits (after the same sign) compare like the numbers.
 */
export function int64OfLiteral(literal: string): string | undefined {
  const bound = literal.charCodeAt(0) === 0x2d ? INT64_MIN_TEXT : INT64_MAX_TEXT;
  if (literal.length < bound.length) return literal === '-0' ? '0' : literal;
  return literal.length === bound.length && literal <= bound ? literal : undefined;
}

/** Whether a JSON value holds a number a double cannot hold exactly. */
export function hasUnsafeNumber(value: unknown): boolean {
  if (typeof value === 'number')
    return !Number.isSafeInteger(value) && Math.abs(value) > Number.MAX_SAFE_INTEGER;
  if (typeof value !== 'object' || value === null) return false;
  for (const item of Array.isArray(value) ? value : Object.values(value))
    if (hasUnsafeNumber(item)) return true;
  return false;
}
