/**
 * The REST v1 contract's routes answered from precomputed JSON bytes: no storage, no parsing beyond
 * the URL, so whatever sits in front of it is the bottleneck. It counts requests (the bench's upstream
 * calls per operation) and the distinct keys that reached it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * `small` ids are the ordinals 1…100; `int64` ones are snowflake-like 19-digit ids and category ids
 * beyond 2^53, sent as JSON numbers as the contract sends int64: a hop that parses them into doubles
 * returns them rounded.
 */
export type PetIds = 'small' | 'int64';

const PET_COUNT = 100;
/** The ordinal of the pet every `POST /pets` answers with. */
const CREATED_PET = PET_COUNT + 1;
const NAMES = ['Bella', 'Max', 'Luna', 'Charlie', 'Lucy', 'Cooper', 'Daisy', 'Milo', 'Coco', 'Rocky'];
const STATUSES = ['available', 'pending', 'sold'] as const;

/** One pet, its ids as the decimal text sent. Steps that are not powers of two: most ids are not doubles. */
function pet(ordinal: number, ids: PetIds) {
  const category = ordinal % 4;
  return {
    id: ids === 'small' ? String(ordinal) : String(1_790_417_263_409_152_001n + BigInt(ordinal) * 7_919n),
    name: `${NAMES[ordinal % NAMES.length]} ${ordinal}`,
    categoryId:
      ids === 'small'
        ? String(category + 1)
        : String(1_790_416_998_000_000_003n + BigInt(category) * 1_000_003n),
    status: STATUSES[ordinal % STATUSES.length] ?? 'available',
  };
}

/** The pets `GET /pets?limit=…` lists, in order. */
export function listedPets(ids: PetIds, limit: number): ReadonlyArray<ReturnType<typeof pet>> {
  return Array.from({ length: Math.min(limit, PET_COUNT) }, (_, index) => pet(index + 1, ids));
}

export function createdPetId(ids: PetIds): string {
  return pet(CREATED_PET, ids).id;
}

/** A pet as the contract sends it: int64 fields as JSON numbers, whatever their size. */
const petJson = (p: ReturnType<typeof pet>) =>
  `{"id":${p.id},"name":${JSON.stringify(p.name)},"categoryId":${p.categoryId},"status":"${p.status}"}`;
const error = (status: number, code: string, message: string): [number, Buffer] => [
  status,
  Buffer.from(JSON.stringify({ code, message, status })),
];

function send(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

/** Only `Authorization: Bearer <key>` with one of `apiKeys` is accepted. */
export function createStaticUpstream(apiKeys: readonly string[], ids: PetIds = 'small') {
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

  /** The answer; undefined for `POST /pets`. */
  function answer(req: IncomingMessage): [number, Buffer] | undefined {
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const key = keyIndex.get(req.headers.authorization ?? '');
    if (key === undefined) return error(401, 'UNAUTHENTICATED', 'a valid API key is required');
    seen[key] = 1;
    if (path === '/v1/pets' && req.method === 'GET') {
      const query = new URLSearchParams(queryStart === -1 ? '' : url.slice(queryStart + 1));
      const limit = Number(query.get('limit') ?? '20');
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
        return error(400, 'INVALID_LIMIT', 'limit must be an integer from 1 to 100');
      }
      return [200, list(query.get('status'), limit)];
    }
    if (path === '/v1/pets' && req.method === 'POST') return undefined;
    if (path.startsWith('/v1/pets/') && req.method === 'GET') {
      const body = petBytes.get(path.slice('/v1/pets/'.length));
      return body === undefined ? error(404, 'PET_NOT_FOUND', 'no pet with this id') : [200, body];
    }
    return error(404, 'NOT_FOUND', `no route for ${req.method} ${path}`);
  }

  return {
    handler(req: IncomingMessage, res: ServerResponse): void {
      calls++;
      const [status, body] = answer(req) ?? [201, createdBytes];
      // A body is always read (a real service must), never stored: every create answers the same pet.
      if (req.method === 'GET') send(res, status, body);
      else req.resume().once('end', () => send(res, status, body));
    },
    calls: () => calls,
    /** Distinct accepted keys since the previous call: whether callers' own keys reach the upstream. */
    takeKeysSeen() {
      const count = seen.reduce((sum, s) => sum + s, 0);
      seen.fill(0);
      return count;
    },
  };
}
