import { UpstreamBadResponseError, UpstreamResponseError } from './errors.ts';

/** `GET /pets/{petId}` is removed on this day (the contract's Versioning section). */
export const PET_SUNSET = new Date('2030-12-05T00:00:00Z');

/** REST `PetStatus`. */
export type PetStatusDto = 'available' | 'pending' | 'sold';

/**
 * REST `Pet`. int64 fields are kept as exact decimal strings: a JS number would silently round
 * ids above 2^53.
 */
export interface PetDto {
  id: string;
  name: string;
  categoryId: string;
  status?: PetStatusDto;
}

/** REST `NewPet`, with `categoryId` already checked to be a decimal int64. */
export interface NewPetDto {
  name: string;
  categoryId: string;
  status?: PetStatusDto;
}

export interface ListPetsQuery {
  status?: PetStatusDto;
  limit: number;
}

const STATUSES: ReadonlySet<unknown> = new Set(['available', 'pending', 'sold']);
const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/;

/** Canonical decimal form of an int64 literal, or undefined if it is not one. */
export function canonicalInt64(text: string): string | undefined {
  return INTEGER_LITERAL.test(text) ? int64OfLiteral(text) : undefined;
}

/**
 * `canonicalInt64` of a string already known to match INTEGER_LITERAL. Such a literal has no leading
 * zero, so it is its own canonical form (but `-0`), and its length says whether it is in range but
 * at the bounds' own length, where strings of digits (after the same sign) compare like the numbers.
 */
function int64OfLiteral(literal: string): string | undefined {
  const bound = literal.charCodeAt(0) === 0x2d ? '-9223372036854775808' : '9223372036854775807';
  if (literal.length < bound.length) return literal === '-0' ? '0' : literal;
  return literal.length === bound.length && literal <= bound ? literal : undefined;
}

/**
 * JSON.parse that keeps the source text of every integer under an int64 key, so ids survive exactly
 * (Node 24's reviver `context.source`, no extra parser needed). A reviver costs ~3× a plain parse,
 * so `parseBody` only uses this when a plain parse found an int64 beyond a double's exact range.
 */
function parseJsonExact(text: string): unknown {
  return JSON.parse(text, (key, value, context?: { source?: string }) =>
    (key === 'id' || key === 'categoryId') && typeof value === 'number' && context?.source !== undefined
      ? new Int64Source(context.source)
      : value,
  );
}

/** Marks a number literal found under an int64 key, so shape checks can tell it from a string. */
class Int64Source {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

function int64Field(value: unknown): string {
  // A safe integer prints exactly; anything else arrived through parseJsonExact as its source text.
  if (Number.isSafeInteger(value)) return String(value);
  const canonical = value instanceof Int64Source ? canonicalInt64(value.source) : undefined;
  if (canonical === undefined) throw new UpstreamBadResponseError('int64 field is not an integer');
  return canonical;
}

/** Whether a plain JSON.parse may have rounded an int64 field (a number that is not a safe integer). */
function mayHaveRounded(value: unknown): boolean {
  const pets = Array.isArray(value) ? value : [value];
  for (const pet of pets) {
    if (typeof pet !== 'object' || pet === null) continue;
    const { id, categoryId } = pet as Record<string, unknown>;
    if (
      (typeof id === 'number' && !Number.isSafeInteger(id)) ||
      (typeof categoryId === 'number' && !Number.isSafeInteger(categoryId))
    ) {
      return true;
    }
  }
  return false;
}

function toPet(value: unknown): PetDto {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UpstreamBadResponseError('pet is not an object');
  }
  const record = value as Record<string, unknown>;
  if (typeof record.name !== 'string') throw new UpstreamBadResponseError('pet name is not a string');
  const pet: PetDto = {
    id: int64Field(record.id),
    name: record.name,
    categoryId: int64Field(record.categoryId),
  };
  if (record.status !== undefined && record.status !== null) {
    if (!STATUSES.has(record.status)) throw new UpstreamBadResponseError('pet status is unknown');
    pet.status = record.status as PetStatusDto;
  }
  return pet;
}

function parseBody(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UpstreamBadResponseError('body is not JSON');
  }
  return mayHaveRounded(value) ? parseJsonExact(text) : value;
}

/** A 2xx body of `GET /pets/{petId}` or `POST /pets`. */
export function parsePet(text: string): PetDto {
  return toPet(parseBody(text));
}

/** A 2xx body of `GET /pets`. */
export function parsePets(text: string): PetDto[] {
  const value = parseBody(text);
  if (!Array.isArray(value)) throw new UpstreamBadResponseError('pets is not an array');
  return value.map(toPet);
}

/**
 * A contract Error body, or undefined when the body is not one (then the caller classifies the
 * failure by status alone). The HTTP status wins over the body's `status` field if they disagree.
 */
export function parseErrorBody(
  status: number,
  text: string,
  retryAfter: number | undefined,
): UpstreamResponseError | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { code, message } = value as Record<string, unknown>;
  if (typeof code !== 'string' || code === '' || typeof message !== 'string') return undefined;
  return new UpstreamResponseError(status, code, message, retryAfter);
}

/** `NewPet` as JSON, with `categoryId` written as an integer literal with every digit. */
export function serializeNewPet(pet: NewPetDto): string {
  const status = pet.status === undefined ? '' : `,"status":${JSON.stringify(pet.status)}`;
  return `{"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId}${status}}`;
}
