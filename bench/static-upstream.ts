import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A minimal implementation of the REST v1 contract's routes that answers from precomputed JSON
 * bytes: no storage, no parsing beyond the URL, so whatever sits in front of it is the bottleneck.
 * It counts every request, which is how the bench measures upstream calls per GraphQL operation.
 */
export interface StaticUpstream {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Requests answered so far, whatever their outcome. */
  calls(): number;
  /**
   * How many distinct accepted keys came since the previous call (which starts the count afresh):
   * whether the callers' own keys reach the upstream through a hop.
   */
  takeKeysSeen(): number;
}

/** Pets 1…PET_COUNT exist; `GET /pets?limit=100` returns them all. */
export const PET_COUNT = 100;
/** The ordinal of the pet a `POST /pets` always answers with. */
const CREATED_PET = PET_COUNT + 1;

/**
 * Which ids the pets carry: `small` (1…100, the id is the ordinal) or `int64`, snowflake-like
 * 19-digit ids and category ids beyond 2^53, sent as JSON numbers as the contract sends int64: a
 * gateway that parses them into doubles returns them rounded.
 */
export type PetIds = 'small' | 'int64';

const NAMES = ['Bella', 'Max', 'Luna', 'Charlie', 'Lucy', 'Cooper', 'Daisy', 'Milo', 'Coco', 'Rocky'];
const STATUSES = ['available', 'pending', 'sold'] as const;
// Steps that are not powers of two, so most ids are not doubles (which are 256 apart up here).
const INT64_ID_BASE = 1_790_417_263_409_152_001n;
const INT64_ID_STEP = 7_919n;
const INT64_CATEGORY_BASE = 1_790_416_998_000_000_003n;
const INT64_CATEGORY_STEP = 1_000_003n;

interface Pet {
  /** Decimal, exactly as sent. */
  id: string;
  name: string;
  categoryId: string;
  status: (typeof STATUSES)[number];
}

function pet(ordinal: number, ids: PetIds): Pet {
  const category = ordinal % 4;
  return {
    id: ids === 'small' ? String(ordinal) : String(INT64_ID_BASE + BigInt(ordinal) * INT64_ID_STEP),
    name: `${NAMES[ordinal % NAMES.length]} ${ordinal}`,
    categoryId:
      ids === 'small'
        ? String(category + 1)
        : String(INT64_CATEGORY_BASE + BigInt(category) * INT64_CATEGORY_STEP),
    status: STATUSES[ordinal % STATUSES.length] ?? 'available',
  };
}

/** The pets `GET /pets?limit=…` lists, in order, with their ids as the decimal text sent. */
export function listedPets(ids: PetIds, limit: number): readonly Pet[] {
  return Array.from({ length: Math.min(limit, PET_COUNT) }, (_, index) => pet(index + 1, ids));
}

/** The id a `POST /pets` always answers with. */
export function createdPetId(ids: PetIds): string {
  return pet(CREATED_PET, ids).id;
}

/** A pet as the contract sends it: int64 fields as JSON numbers, whatever their size. */
const petJson = (p: Pet) =>
  `{"id":${p.id},"name":${JSON.stringify(p.name)},"categoryId":${p.categoryId},"status":"${p.status}"}`;
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));
const LIST_PATH = '/v1/pets';
const PET_PATH = '/v1/pets/';

function send(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

function error(status: number, code: string, message: string): [number, Buffer] {
  return [status, bytes({ code, message, status })];
}

/** Creates the handler; only `Authorization: Bearer <key>` with one of `apiKeys` is accepted. */
export function createStaticUpstream(apiKeys: readonly string[], ids: PetIds = 'small'): StaticUpstream {
  const keyIndex = new Map(apiKeys.map((key, i) => [`Bearer ${key}`, i]));
  const seen = new Uint8Array(apiKeys.length);
  const pets = listedPets(ids, PET_COUNT);
  const petBytes = new Map(pets.map((p) => [p.id, Buffer.from(petJson(p))]));
  const createdBytes = Buffer.from(petJson(pet(CREATED_PET, ids)));
  // `status|limit` → bytes, filled on first use: a bench asks for a handful of distinct pages.
  const lists = new Map<string, Buffer>();
  let calls = 0;

  function list(status: string | null, limit: number): Buffer {
    const key = `${status ?? ''}|${limit}`;
    let body = lists.get(key);
    if (body === undefined) {
      const page = pets.filter((p) => status === null || p.status === status).slice(0, limit);
      body = Buffer.from(`[${page.map(petJson).join(',')}]`);
      lists.set(key, body);
    }
    return body;
  }

  /** The answer to a request whose body is not needed; undefined for `POST /pets`. */
  function answer(req: IncomingMessage): [number, Buffer] | undefined {
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const key = keyIndex.get(req.headers.authorization ?? '');
    if (key === undefined) return error(401, 'UNAUTHENTICATED', 'a valid API key is required');
    seen[key] = 1;
    if (path === LIST_PATH && req.method === 'GET') {
      const query = new URLSearchParams(queryStart === -1 ? '' : url.slice(queryStart + 1));
      const limit = Number(query.get('limit') ?? '20');
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
        return error(400, 'INVALID_LIMIT', 'limit must be an integer from 1 to 100');
      }
      return [200, list(query.get('status'), limit)];
    }
    if (path === LIST_PATH && req.method === 'POST') return undefined;
    if (path.startsWith(PET_PATH) && req.method === 'GET') {
      const body = petBytes.get(path.slice(PET_PATH.length));
      return body === undefined ? error(404, 'PET_NOT_FOUND', 'no pet with this id') : [200, body];
    }
    return error(404, 'NOT_FOUND', `no route for ${req.method} ${path}`);
  }

  function handler(req: IncomingMessage, res: ServerResponse): void {
    calls++;
    // The body is always read (a real service must), never stored: every create answers the same pet.
    const [status, body] = answer(req) ?? [201, createdBytes];
    if (req.method === 'GET') {
      send(res, status, body);
    } else {
      req.resume();
      req.once('end', () => send(res, status, body));
    }
  }

  return {
    handler,
    calls: () => calls,
    takeKeysSeen() {
      const count = seen.reduce((sum, s) => sum + s, 0);
      seen.fill(0);
      return count;
    },
  };
}
