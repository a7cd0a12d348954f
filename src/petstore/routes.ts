import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  GET_PET_DEPRECATED,
  isInt64,
  isPetStatus,
  PET_STATUSES,
  PET_SUNSET_HTTP,
  type PetStatus,
} from '../contract/animal-store.ts';
import { ROUTES as CONTRACT, type ContractRoute, pathPattern } from '../contract/routes.ts';
import { HttpError } from './errors.ts';
import { readJsonBody, sendJson } from './http.ts';
import { LIMITS, type MessageDto, type NewPetDto } from './model.ts';
import { referenceNameProblem } from './names.ts';
import type { Storage } from './storage.ts';

/** What a route handler gets: the raw request/response, the path match and the query. */
export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: readonly string[];
  query: URLSearchParams;
  storage: Storage;
}

export type Handler = (ctx: RouteContext) => Promise<void> | void;

/**
 * A path with its handlers per method; a method's `headers` go on every answer of that route (its
 * errors too), not on the path's other methods: a deprecation is an operation's, not a path's.
 */
export interface Route {
  pattern: RegExp;
  methods: Readonly<Record<string, Handler>>;
  headers?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** The only value of a query parameter, undefined when absent; repeating it is an error. */
function single(
  query: URLSearchParams,
  name: string,
  code: 'INVALID_LIMIT' | 'INVALID_STATUS',
): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new HttpError(code, `query parameter "${name}" must be given at most once`);
  return values[0];
}

function parseLimit(query: URLSearchParams): number {
  const raw = single(query, 'limit', 'INVALID_LIMIT');
  if (raw === undefined) return LIMITS.listDefault;
  // Leading zeros are read past, however many: the value decides, as for petId.
  const digits = /^0*(\d{1,3})$/.exec(raw)?.[1];
  const value = digits === undefined ? Number.NaN : Number(digits);
  if (!(value >= LIMITS.listMin && value <= LIMITS.listMax)) {
    throw new HttpError(
      'INVALID_LIMIT',
      `limit must be an integer from ${LIMITS.listMin} to ${LIMITS.listMax}, got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

function parseStatusFilter(query: URLSearchParams): PetStatus | undefined {
  const raw = single(query, 'status', 'INVALID_STATUS');
  if (raw === undefined || isPetStatus(raw)) return raw;
  throw new HttpError(
    'INVALID_STATUS',
    `status must be one of ${PET_STATUSES.join(', ')}, got ${JSON.stringify(raw)}`,
  );
}

/**
 * `petId`: a decimal int64 (optional '-', leading zeros read past however many); anything else,
 * including values beyond int64, is a 400.
 */
export function parsePetId(raw: string): bigint {
  const digits = /^(-?)0*(\d{1,20})$/.exec(raw);
  const id = digits ? BigInt(`${digits[1]}${digits[2]}`) : undefined;
  if (id === undefined || !isInt64(id)) {
    throw new HttpError('INVALID_PET_ID', `petId must be an int64 integer, got ${JSON.stringify(raw)}`);
  }
  return id;
}

function assertObject(body: unknown): asserts body is Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError('INVALID_BODY', 'the request body must be a JSON object');
  }
}

function assertKnownFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(body).find((key) => !allowed.includes(key));
  if (unknown !== undefined) {
    throw new HttpError('UNKNOWN_FIELD', `unknown field "${unknown}"; allowed: ${allowed.join(', ')}`);
  }
}

/** A string field measured in code points; `trim` strips surrounding whitespace first. */
function stringField(
  body: Record<string, unknown>,
  field: string,
  min: number,
  max: number,
  trim: boolean,
): string {
  const value = body[field];
  if (value === undefined || value === null) throw new HttpError('MISSING_FIELD', `"${field}" is required`);
  if (typeof value !== 'string') throw new HttpError('INVALID_FIELD', `"${field}" must be a string`);
  // A lone surrogate (`"\ud800"` in JSON) has no UTF-8 form: SQLite would store U+FFFD instead.
  if (!value.isWellFormed())
    throw new HttpError('INVALID_FIELD', `"${field}" must be well-formed Unicode text`);
  const text = trim ? value.trim() : value;
  const length = [...text].length;
  if (length < min || length > max) {
    throw new HttpError(
      'INVALID_FIELD',
      `"${field}" must be ${min} to ${max} characters long${trim ? ' after trimming' : ''}`,
    );
  }
  return text;
}

/** Validates a NewPet: the single place the body rules live (see docs/reference-service.md). */
export function parseNewPet(body: unknown): NewPetDto {
  assertObject(body);
  assertKnownFields(body, ['name', 'categoryId', 'status']);
  const name = stringField(body, 'name', LIMITS.nameMin, LIMITS.nameMax, true);
  const problem = referenceNameProblem(name);
  if (problem !== undefined) throw new HttpError('INVALID_FIELD', problem);

  const rawCategory = body.categoryId;
  if (rawCategory === undefined || rawCategory === null)
    throw new HttpError('MISSING_FIELD', '"categoryId" is required');
  // Integer literals arrive as bigint; a safe integer written as 1.0 or 1e3 is accepted as well.
  const categoryId =
    typeof rawCategory === 'bigint'
      ? rawCategory
      : typeof rawCategory === 'number' && Number.isSafeInteger(rawCategory)
        ? BigInt(rawCategory)
        : undefined;
  if (categoryId === undefined || !isInt64(categoryId)) {
    throw new HttpError('INVALID_FIELD', '"categoryId" must be an int64 integer');
  }

  const pet: NewPetDto = { name, categoryId };
  // null means "no status", like an absent field.
  if (body.status !== undefined && body.status !== null) {
    if (!isPetStatus(body.status)) {
      throw new HttpError('INVALID_FIELD', `"status" must be one of ${PET_STATUSES.join(', ')}`);
    }
    pet.status = body.status;
  }
  return pet;
}

const listPets: Handler = ({ res, query, storage }) => {
  const limit = parseLimit(query);
  const status = parseStatusFilter(query);
  sendJson(res, 200, storage.listPets(limit, status));
};

const createPet: Handler = async ({ req, res, storage }) => {
  const newPet = parseNewPet(await readJsonBody(req, LIMITS.bodyBytes));
  const pet = storage.createPet(newPet);
  sendJson(res, CONTRACT.createPet.success.status, pet, { Location: `/v1/pets/${pet.id}` });
};

const getPet: Handler = ({ res, params, storage }) => {
  const id = parsePetId(params[0] ?? '');
  const pet = storage.getPet(id);
  if (pet === undefined) throw new HttpError('PET_NOT_FOUND', `no pet with id ${id}`);
  sendJson(res, 200, pet);
};

/** The quickstart's test request: validated, recorded, answered 202 because it is only queued. */
const postMessage: Handler = async ({ req, res, storage }) => {
  const body = await readJsonBody(req, LIMITS.bodyBytes);
  assertObject(body);
  assertKnownFields(body, ['message']);
  const message: MessageDto = {
    id: `msg_${randomUUID()}`,
    message: stringField(body, 'message', LIMITS.messageMin, LIMITS.messageMax, false),
    status: 'queued',
    createdAt: new Date().toISOString(),
  };
  storage.saveMessage(message);
  sendJson(res, 202, message);
};

/** A handler for each of the contract's operations: a route added there fails to compile until it has one. */
const HANDLERS: { readonly [Operation in keyof typeof CONTRACT]: Handler } = { listPets, createPet, getPet };

/** What every answer of a deprecated operation carries (errors too), as the contract's Versioning section says. */
const DEPRECATED_OPERATION_HEADERS = {
  Deprecation: GET_PET_DEPRECATED,
  Sunset: PET_SUNSET_HTTP,
  Link: '</v1/pets>; rel="successor-version"',
};

/**
 * A route the contract lacks and its handler: a test's own (test/upstream/delete-pet.test.ts), served
 * beside the contract's as a route added to the contract would be, on the same paths.
 */
export interface ExtraRoute {
  readonly route: ContractRoute;
  readonly handler: Handler;
}

/**
 * The service's routes: the contract's (src/contract/routes.ts) and `extra` under `/v1`, one entry
 * per path, its methods together; then the quickstart's. Paths are matched raw (not percent-decoded).
 */
export function serviceRoutes(extra: readonly ExtraRoute[] = []): Route[] {
  const byPath = new Map<
    string,
    {
      pattern: RegExp;
      methods: Record<string, Handler>;
      headers: Record<string, Readonly<Record<string, string>>>;
    }
  >();
  const contract = Object.entries(CONTRACT).map(([operation, route]) => ({
    route: route as ContractRoute,
    handler: HANDLERS[operation as keyof typeof CONTRACT],
  }));
  for (const { route, handler } of [...contract, ...extra]) {
    let entry = byPath.get(route.path);
    if (entry === undefined) {
      entry = { pattern: pathPattern(route, '/v1'), methods: {}, headers: {} };
      byPath.set(route.path, entry);
    }
    entry.methods[route.method] = handler;
    if (route.deprecated) entry.headers[route.method] = DEPRECATED_OPERATION_HEADERS;
  }
  return [...byPath.values(), { pattern: /^\/quickstart\/messages$/, methods: { POST: postMessage } }];
}
