/**
 * The upstream body parsing of src/upstream/bodies.ts as it was before exact-json.ts: a plain
 * JSON.parse, re-parsed with a `context.source` reviver when an int64 field may have been rounded.
 * Kept verbatim as the oracle the new parser is checked against (test/upstream/exact-json.test.ts)
 * and measured against (bench/parse.ts).
 */

import type { PetDto, PetStatusDto } from '../../src/upstream/bodies.ts';
import { UpstreamBadResponseError } from '../../src/upstream/errors.ts';

const STATUSES: ReadonlySet<unknown> = new Set(['available', 'pending', 'sold']);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/;

/** The former canonicalInt64: regex, then BigInt. */
export function oracleCanonicalInt64(text: string): string | undefined {
  if (!INTEGER_LITERAL.test(text) || text.length > 20) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value.toString();
}

function parseJsonExact(text: string): unknown {
  return JSON.parse(text, (key, value, context?: { source?: string }) =>
    (key === 'id' || key === 'categoryId') && typeof value === 'number' && context?.source !== undefined
      ? new Int64Source(context.source)
      : value,
  );
}

class Int64Source {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

function int64Field(value: unknown): string {
  if (Number.isSafeInteger(value)) return String(value);
  const canonical = value instanceof Int64Source ? oracleCanonicalInt64(value.source) : undefined;
  if (canonical === undefined) throw new UpstreamBadResponseError('int64 field is not an integer');
  return canonical;
}

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

/** The former parsePet. */
export function oracleParsePet(text: string): PetDto {
  return toPet(parseBody(text));
}

/** The former parsePets. */
export function oracleParsePets(text: string): PetDto[] {
  const value = parseBody(text);
  if (!Array.isArray(value)) throw new UpstreamBadResponseError('pets is not an array');
  return value.map(toPet);
}
