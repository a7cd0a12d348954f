import { canonicalInt64 } from '../upstream/contract.ts';
import { badUserInput } from './errors.ts';

/** The contract's page-size bounds for `GET /pets`. */
export const LIMIT_MIN = 1;
export const LIMIT_MAX = 100;
export const LIMIT_DEFAULT = 20;

/** An `ID` argument that must be a decimal int64; returns its canonical form. */
export function int64Argument(value: string, argument: string): string {
  const canonical = canonicalInt64(value);
  if (canonical === undefined) {
    throw badUserInput(`${argument} must be a decimal 64-bit integer.`, argument);
  }
  return canonical;
}

/**
 * The `id` of a `Pet` representation (`_entities`): a decimal int64 string, as routers send an `ID`,
 * or a JSON integer a double holds exactly. A larger number has already been rounded by JSON
 * parsing, so it is refused rather than looked up as some other pet.
 */
export function int64Key(value: unknown): string {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  const canonical = typeof text === 'string' ? canonicalInt64(text) : undefined;
  if (canonical === undefined) {
    throw badUserInput(
      'A Pet representation needs an id that is a decimal 64-bit integer.',
      'representations',
    );
  }
  return canonical;
}

/** `limit` checked against the contract before any upstream call; an explicit null means the default. */
export function limitArgument(value: number | null | undefined): number {
  if (value === null || value === undefined) return LIMIT_DEFAULT;
  if (value < LIMIT_MIN || value > LIMIT_MAX) {
    throw badUserInput(`limit must be from ${LIMIT_MIN} to ${LIMIT_MAX}, got ${value}.`, 'limit');
  }
  return value;
}
