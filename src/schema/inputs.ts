import { INT64_MAX, INT64_MIN, LIST_LIMIT } from '../contract/animal-store.ts';
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
 * `createPet`'s `input.name`: well-formed (textArgument) and not empty or blank. The contract states
 * no name limits; refusing a name with nothing but whitespace is this gateway's own rule (no store
 * could show it as a name), so the message says whose rule it is. The name goes upstream as typed.
 */
export function nameArgument(value: string, argument: string): string {
  const text = textArgument(value, argument);
  if (text.trim() === '') {
    throw badUserInput(
      `${argument} must not be empty or blank (this gateway's rule; the animal store's contract sets no name limits).`,
      argument,
    );
  }
  return text;
}

/**
 * A name within NAME_MAX_LENGTH, when the operator set one: code points of the trimmed text, as
 * the reference service counts them, counted no further than `max + 1` (a 1 MB name is not walked).
 */
export function nameWithin(text: string, max: number | undefined, argument: string): void {
  if (max === undefined) return;
  let length = 0;
  for (const _ of text.trim()) if (++length > max) break;
  if (length <= max) return;
  throw badUserInput(
    `${argument} must be at most ${max} characters long (surrounding spaces aside; this gateway's NAME_MAX_LENGTH); got ${[...text.trim()].length}.`,
    argument,
  );
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
