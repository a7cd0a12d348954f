import { INT64_MAX, INT64_MIN, LIST_LIMIT, NAME_LENGTH, nameLength } from '../contract/animal-store.ts';
import { parseInt64Input } from '../contract/int64.ts';
import { badUserInput } from './errors.ts';

/** How much of a refused value a message quotes back. */
const QUOTED_LENGTH = 40;

/** An `ID` argument that must be an int64 (see parseInt64Input); returns its canonical form. */
export function int64Argument(value: string, argument: string): string {
  const parsed = parseInt64Input(value);
  if ('value' in parsed) return parsed.value;
  const got = quote(value);
  throw badUserInput(
    parsed.problem === 'range'
      ? `${argument} must be a 64-bit integer, from ${INT64_MIN} to ${INT64_MAX}; ${got} is outside that range.`
      : `${argument} must be a 64-bit integer in decimal digits, such as "42"; got ${got}.`,
    argument,
  );
}

/**
 * The `id` of a `Pet` representation (`_entities`): a decimal int64 string, as routers send an `ID`,
 * or a JSON integer a double holds exactly. A larger number has already been rounded by JSON
 * parsing, so it is refused rather than looked up as some other pet.
 */
export function int64Key(value: unknown): string {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  // Read as an argument is: a router may pass on what a client typed (`"007"` is pet 7).
  const parsed = typeof text === 'string' ? parseInt64Input(text) : undefined;
  const canonical = parsed && 'value' in parsed ? parsed.value : undefined;
  if (canonical === undefined) {
    throw badUserInput(
      'A Pet representation needs an id that is a decimal 64-bit integer.',
      'representations',
    );
  }
  return canonical;
}

/**
 * A free-text argument as it goes upstream. JSON lets a string carry a lone UTF-16 surrogate
 * (`"\ud800"`), which no UTF-8 store can hold: the reference service would silently keep U+FFFD
 * instead, so the text a client sent is refused rather than changed.
 */
export function textArgument(value: string, argument: string): string {
  if (value.isWellFormed()) return value;
  throw badUserInput(
    `${argument} must be well-formed Unicode text; it holds a lone surrogate (an unpaired \\uD800–\\uDFFF escape).`,
    argument,
  );
}

/**
 * `createPet`'s `input.name`: well-formed (textArgument) and within the contract's NAME_LENGTH.
 * Checked here so a form learns which field is wrong before anything is sent; the name goes
 * upstream as typed.
 */
export function nameArgument(value: string, argument: string): string {
  const text = textArgument(value, argument);
  const length = nameLength(text);
  if (length < NAME_LENGTH.min) throw badUserInput(`${argument} must not be blank.`, argument);
  if (length > NAME_LENGTH.max) {
    throw badUserInput(
      `${argument} must be at most ${NAME_LENGTH.max} characters long (surrounding spaces aside); got ${[...text.trim()].length}.`,
      argument,
    );
  }
  return text;
}

/** `limit` checked against the contract before any upstream call; an explicit null means the default. */
export function limitArgument(value: number | null | undefined): number {
  if (value === null || value === undefined) return LIST_LIMIT.default;
  if (value < LIST_LIMIT.min || value > LIST_LIMIT.max) {
    throw badUserInput(`limit must be from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}, got ${value}.`, 'limit');
  }
  return value;
}

/** The value as JSON, cut short: enough to recognise it, never a 64 KB echo. */
function quote(value: string): string {
  return value.length > QUOTED_LENGTH
    ? `${JSON.stringify(value.slice(0, QUOTED_LENGTH)).slice(0, -1)}…" (${value.length} characters)`
    : JSON.stringify(value);
}
