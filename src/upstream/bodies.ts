import { isPetStatus, type PetStatus } from '../contract/animal-store.ts';
import { canonicalInt64, int64OfLiteral } from '../contract/int64.ts';
import type { ContractRoute, WriteRoute } from '../contract/routes.ts';
import { UpstreamBadResponseError, UpstreamResponseError } from './errors.ts';
import { isMarked, isMarkedInteger, markedText, parseJsonMarked } from './exact-json.ts';

/** REST `PetStatus`. */
export type PetStatusDto = PetStatus;

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

/**
 * One text per distinct `GET /pets` query, and the one place a query's parameters are written: it
 * is the request's query string, and it names the list wherever a list is matched (the request's
 * memo, coalescing, the response cache's keys, live lists), so a parameter added here is part of
 * every one of them.
 */
export const listKey = (query: ListPetsQuery): string =>
  query.status === undefined ? `limit=${query.limit}` : `limit=${query.limit}&status=${query.status}`;

/**
 * JSON.parse that keeps the source text of every integer under an int64 key, so ids survive exactly
 * (Node 24's reviver `context.source`). A reviver costs several plain parses: parseBody uses this
 * only for the few bodies parseJsonMarked leaves to it that a plain parse may have rounded.
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

/**
 * A parsed body, read as the contract reads it: a plain JSON.parse, parsed again with parseJsonExact
 * when some int64 field is a number a double may have rounded (not a safe integer).
 */
interface Body {
  readonly value: unknown;
  /**
   * Whether `value` came from parseJsonMarked, which does both parses in one: its marked strings
   * stand for numbers. When false, every string is the upstream's own and an int64 field may be an
   * Int64Source.
   */
  readonly marked: boolean;
  /** When `marked`: whether the body is one the plain parse would have sent to parseJsonExact. */
  readonly rounded: boolean;
}

/**
 * Which way the last body went, to try that way first: an upstream's ids are all small or all
 * snowflake-long, and each way costs most on the other kind of body (a scan of every member for
 * nothing; a plain parse thrown away). A guess only: whichever way runs, the result is the one
 * described at {@link parseBody}.
 */
export interface LongIntegerGuess {
  long: boolean;
}

/** The guess of this process's upstream client, shared by its calls (holds no caller's data). */
const sharedGuess: LongIntegerGuess = { long: false };

/**
 * A body read as the contract reads it: a plain JSON.parse, and when some int64 field is a number a
 * double may have rounded, the exact reading: parseJsonMarked in one parse when it can (a body
 * with a long integer as a member's value, unless it holds DEL or a colon and a number inside a
 * string that looks like a member), else parseJsonExact. Which of the two is tried first, `guess`
 * says (see LongIntegerGuess); it is updated by what the body held.
 */
function parseBody(text: string, guess: LongIntegerGuess): Body {
  if (!guess.long) {
    const value = parsePlain(text);
    if (!mayHaveRounded(value, false)) return { value, marked: false, rounded: false };
    guess.long = true;
    return parseExactly(text, value);
  }
  return parseExactly(text, undefined, guess);
}

/**
 * The exact reading of a body a plain parse may round (`plain`, when it was parsed already); with
 * `guess`, a body found to need none turns the guess back to small ids.
 */
function parseExactly(text: string, plain: unknown, guess?: LongIntegerGuess): Body {
  const marked = parseJsonMarked(text);
  if (marked !== undefined) {
    return { value: marked.value, marked: true, rounded: mayHaveRounded(marked.value, true) };
  }
  const value = plain === undefined ? parsePlain(text) : plain;
  const rounded = mayHaveRounded(value, false);
  if (guess !== undefined && !rounded) guess.long = false;
  return { value: rounded ? parseJsonExact(text) : value, marked: false, rounded: false };
}

function parsePlain(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamBadResponseError('body is not JSON');
  }
}

/** Whether a plain JSON.parse may have rounded an int64 field (a number that is not a safe integer). */
function mayHaveRounded(value: unknown, marked: boolean): boolean {
  const pets = Array.isArray(value) ? value : [value];
  for (const pet of pets) {
    if (typeof pet !== 'object' || pet === null) continue;
    const { id, categoryId } = pet as Record<string, unknown>;
    if (unsafeNumber(id, marked) || unsafeNumber(categoryId, marked)) return true;
  }
  return false;
}

function unsafeNumber(value: unknown, marked: boolean): boolean {
  if (typeof value === 'number') return !Number.isSafeInteger(value);
  // Number() rounds a JSON number's text as JSON.parse does.
  return marked && isMarked(value) && !Number.isSafeInteger(Number(markedText(value)));
}

function int64Field(value: unknown, body: Body): string {
  // A safe integer prints exactly, -0 as 0 like canonicalInt64.
  if (Number.isSafeInteger(value)) return String(value);
  let canonical: string | undefined;
  if (value instanceof Int64Source) {
    canonical = canonicalInt64(value.source);
  } else if (body.marked && isMarked(value)) {
    if (body.rounded) {
      // parseJsonExact would have kept the text, and canonicalInt64 refuses a fraction or exponent.
      canonical = isMarkedInteger(value) ? int64OfLiteral(markedText(value)) : undefined;
    } else {
      // A plain parse keeps a double; here it is a safe integer (else the body would be `rounded`).
      const number = Number(markedText(value));
      canonical = Number.isSafeInteger(number) ? String(number) : undefined;
    }
  }
  if (canonical === undefined) throw new UpstreamBadResponseError('int64 field is not an integer');
  return canonical;
}

function toPet(value: unknown, body: Body): PetDto {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UpstreamBadResponseError('pet is not an object');
  }
  const record = value as Record<string, unknown>;
  // A marked name was a number in the body.
  if (typeof record.name !== 'string' || (body.marked && isMarked(record.name))) {
    throw new UpstreamBadResponseError('pet name is not a string');
  }
  const pet: PetDto = {
    id: int64Field(record.id, body),
    name: record.name,
    categoryId: int64Field(record.categoryId, body),
  };
  if (record.status !== undefined && record.status !== null) {
    // A marked status, a number in the body, is none of them either.
    if (!isPetStatus(record.status)) throw new UpstreamBadResponseError('pet status is unknown');
    pet.status = record.status as PetStatusDto;
  }
  return pet;
}

/** A 2xx body of `GET /pets/{petId}` or `POST /pets`. */
export function parsePet(text: string, guess = sharedGuess): PetDto {
  const body = parseBody(text, guess);
  return toPet(body.value, body);
}

/** A 2xx body of `GET /pets`. */
export function parsePets(text: string, guess = sharedGuess): PetDto[] {
  const body = parseBody(text, guess);
  if (!Array.isArray(body.value)) throw new UpstreamBadResponseError('pets is not an array');
  return body.value.map((pet) => toPet(pet, body));
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
  if (typeof code !== 'string' || !MACHINE_READABLE.test(code) || typeof message !== 'string')
    return undefined;
  return new UpstreamResponseError(status, code, message, retryAfter);
}

/**
 * What the contract's "machine-readable error code" can be, bounded: the code is passed on verbatim
 * to clients, logs and a metric's label, so a 200 kB or free-text `code` is no Error body.
 */
const MACHINE_READABLE = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/**
 * A write: its route (which declares what it changes), the route's path parameters, and its body
 * when the route takes one.
 */
export interface WriteRequest {
  readonly route: WriteRoute;
  readonly params?: Readonly<Record<string, string>>;
  readonly body?: NewPetDto;
}

/** The request's body as the route's schema writes it; undefined for a route without one. */
export function serializeBody(request: WriteRequest): string | undefined {
  const { route, body } = request;
  if (route.body === undefined) return undefined;
  if (body === undefined) throw new TypeError(`${route.name} needs its ${route.body} body`);
  return BODY_WRITERS[route.body](body);
}

/** `NewPet` as JSON, with `categoryId` written as an integer literal with every digit. */
export function serializeNewPet(pet: NewPetDto): string {
  const status = pet.status === undefined ? '' : `,"status":${JSON.stringify(pet.status)}`;
  return `{"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId}${status}}`;
}

/** How each body schema the contract's routes carry is written. */
const BODY_WRITERS: { [Schema in NonNullable<ContractRoute['body']>]: (body: NewPetDto) => string } = {
  NewPet: serializeNewPet,
};
