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
}

/** Pets with ids 1…PET_COUNT exist; `GET /pets?limit=100` returns them all. */
export const PET_COUNT = 100;
/** The id a `POST /pets` always answers with. */
export const CREATED_PET_ID = PET_COUNT + 1;

const NAMES = ['Bella', 'Max', 'Luna', 'Charlie', 'Lucy', 'Cooper', 'Daisy', 'Milo', 'Coco', 'Rocky'];
const STATUSES = ['available', 'pending', 'sold'] as const;

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: (typeof STATUSES)[number];
}

function pet(id: number): Pet {
  return {
    id,
    name: `${NAMES[id % NAMES.length]} ${id}`,
    categoryId: (id % 4) + 1,
    status: STATUSES[id % STATUSES.length] ?? 'available',
  };
}

const PETS: readonly Pet[] = Array.from({ length: PET_COUNT }, (_, index) => pet(index + 1));
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));
const PET_BYTES = new Map(PETS.map((p) => [String(p.id), bytes(p)]));
const CREATED_BYTES = bytes(pet(CREATED_PET_ID));
const LIST_PATH = '/v1/pets';
const PET_PATH = '/v1/pets/';

function send(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

function error(status: number, code: string, message: string): [number, Buffer] {
  return [status, bytes({ code, message, status })];
}

/** Creates the handler; only `Authorization: Bearer <apiKey>` is accepted. */
export function createStaticUpstream(apiKey: string): StaticUpstream {
  const expectedAuthorization = `Bearer ${apiKey}`;
  // `status|limit` → bytes, filled on first use: a bench asks for a handful of distinct pages.
  const lists = new Map<string, Buffer>();
  let calls = 0;

  function list(status: string | null, limit: number): Buffer {
    const key = `${status ?? ''}|${limit}`;
    let body = lists.get(key);
    if (body === undefined) {
      body = bytes(PETS.filter((p) => status === null || p.status === status).slice(0, limit));
      lists.set(key, body);
    }
    return body;
  }

  /** The answer to a request whose body is not needed; undefined for `POST /pets`. */
  function answer(req: IncomingMessage): [number, Buffer] | undefined {
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    if (req.headers.authorization !== expectedAuthorization) {
      return error(401, 'UNAUTHENTICATED', 'a valid API key is required');
    }
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
      const body = PET_BYTES.get(path.slice(PET_PATH.length));
      return body === undefined ? error(404, 'PET_NOT_FOUND', 'no pet with this id') : [200, body];
    }
    return error(404, 'NOT_FOUND', `no route for ${req.method} ${path}`);
  }

  function handler(req: IncomingMessage, res: ServerResponse): void {
    calls++;
    // The body is always read (a real service must), never stored: every create answers the same pet.
    const [status, body] = answer(req) ?? [201, CREATED_BYTES];
    if (req.method === 'GET') {
      send(res, status, body);
    } else {
      req.resume();
      req.once('end', () => send(res, status, body));
    }
  }

  return { handler, calls: () => calls };
}
