/**
 * The hand-written Node hops the gateway is measured against: the bare proxy, what the cheapest
 * possible Node hop costs, and the JSON hop, the floor for any gateway that rewrites the body. Both
 * make one undici request per REST call to the same upstream with the caller's Authorization (as
 * the gateway passes it) over a keep-alive pool as large as the gateway's default
 * (UPSTREAM_CONNECTIONS); neither does GraphQL: no document, no validation, no execution. Routes
 * mirror the REST paths without the `/v1` prefix.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Pool } from 'undici';

const CONNECTIONS = 64;
const TIMEOUT_MS = 5000;

/** An upstream answer, read whole. */
interface Forwarded {
  status: number;
  body: Buffer;
}

type Forward = (
  method: 'GET' | 'POST',
  path: string,
  req: IncomingMessage,
  body?: Buffer,
) => Promise<Forwarded>;

/** `path` is relative to the upstream URL's path (its `/v1`). */
function createForward(upstreamUrl: URL): Forward {
  const basePath = upstreamUrl.pathname.replace(/\/+$/, '');
  const pool = new Pool(upstreamUrl.origin, {
    connections: CONNECTIONS,
    pipelining: 1,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  return async (method, path, req, body) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    const { authorization } = req.headers;
    if (authorization !== undefined) headers.authorization = authorization;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await pool.request({ method, path: basePath + path, headers, body });
    return { status: response.statusCode, body: Buffer.from(await response.body.arrayBuffer()) };
  };
}

const NOT_FOUND: Forwarded = {
  status: 404,
  body: Buffer.from('{"code":"NOT_FOUND","message":"no route","status":404}'),
};

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A handler that answers what `handle` returns, or 502 when it throws. */
function hop(handle: (req: IncomingMessage) => Promise<Forwarded>): RequestListener {
  const send = (res: ServerResponse, { status, body }: Forwarded) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  };
  return (req, res) => {
    handle(req).then(
      (answer) => send(res, answer),
      (error: unknown) => {
        if (res.headersSent) return res.destroy();
        const body = Buffer.from(
          JSON.stringify({ code: 'BAD_GATEWAY', message: String(error), status: 502 }),
        );
        send(res, { status: 502, body });
      },
    );
  };
}

/**
 * The bare proxy: bytes returned untouched. `GET /pets?…`, `GET /pets/{id}` and `POST /pets`
 * forward one call each. `GET /pets-by-ids?ids=a,b,…` makes one `GET /pets/{id}` per id in parallel
 * and returns their bodies as a JSON array: the same upstream calls the gateway's de-duplicated
 * alias workload makes, for a like-for-like baseline.
 */
export function createBareProxy(upstreamUrl: URL): RequestListener {
  const forward = createForward(upstreamUrl);
  return hop(async (req) => {
    const url = req.url ?? '/';
    if (url.startsWith('/pets-by-ids?')) {
      const ids = new URLSearchParams(url.slice('/pets-by-ids?'.length)).get('ids')?.split(',') ?? [];
      const answers = await Promise.all(
        ids.map((id) => forward('GET', `/pets/${encodeURIComponent(id)}`, req)),
      );
      const failed = answers.find((a) => a.status !== 200);
      return (
        failed ?? {
          status: 200,
          body: Buffer.concat([
            Buffer.from('['),
            ...answers.flatMap((a, i) => (i === 0 ? [a.body] : [Buffer.from(','), a.body])),
            Buffer.from(']'),
          ]),
        }
      );
    }
    if (url.startsWith('/pets') && (req.method === 'GET' || req.method === 'POST')) {
      const body = await readBody(req);
      return forward(req.method, url, req, req.method === 'POST' ? body : undefined);
    }
    req.resume();
    return NOT_FOUND;
  });
}

interface PetOut {
  id: string;
  name: unknown;
  categoryId: string;
  status: string | null;
}

const ENUM: Readonly<Record<string, string>> = { available: 'AVAILABLE', pending: 'PENDING', sold: 'SOLD' };

/** Holds a number literal's source text, for an int64 a double would round. */
class Int64Source {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

const isInt64Key = (key: string) => key === 'id' || key === 'categoryId';

const unsafe = (pet: Record<string, unknown>) =>
  (typeof pet.id === 'number' && !Number.isSafeInteger(pet.id)) ||
  (typeof pet.categoryId === 'number' && !Number.isSafeInteger(pet.categoryId));

/**
 * A plain JSON.parse, and again with a reviver that keeps int64 source text only when the first
 * found an id beyond 2^53: exactness costs the second parse only to bodies that need it, which is
 * what the gateway does too (src/upstream/bodies.ts).
 */
function parseExact(text: string): unknown {
  const value = JSON.parse(text) as unknown;
  const records = (Array.isArray(value) ? value : [value]) as Array<Record<string, unknown> | null>;
  if (!records.some((r) => typeof r === 'object' && r !== null && unsafe(r))) return value;
  return JSON.parse(text, (key, v, context?: { source?: string }) =>
    isInt64Key(key) && typeof v === 'number' && context?.source !== undefined
      ? new Int64Source(context.source)
      : v,
  );
}

const int64 = (value: unknown) => (value instanceof Int64Source ? value.source : String(value));

function toPet(raw: unknown): PetOut {
  const pet = raw as Record<string, unknown>;
  return {
    id: int64(pet.id),
    name: pet.name,
    categoryId: int64(pet.categoryId),
    status: typeof pet.status === 'string' ? (ENUM[pet.status] ?? null) : null,
  };
}

/**
 * The JSON hop: the upstream's JSON is parsed, each pet mapped to the fields and forms the gateway
 * returns (ids as decimal strings, status as the GraphQL enum), and re-serialised in a GraphQL-shaped
 * envelope. `GET /pets?…` answers `{"data":{"pets":[…]}}` and `POST /pets` answers
 * `{"data":{"createPet":{…}}}`, both with status 200 as the gateway does; an upstream failure is
 * passed on with its status and body.
 */
export function createJsonHop(upstreamUrl: URL): RequestListener {
  const forward = createForward(upstreamUrl);
  return hop(async (req) => {
    const url = req.url ?? '/';
    const isList = req.method === 'GET' && (url === '/pets' || url.startsWith('/pets?'));
    const isCreate = req.method === 'POST' && url === '/pets';
    if (!isList && !isCreate) {
      req.resume();
      return NOT_FOUND;
    }
    const body = await readBody(req);
    const answer = await forward(isList ? 'GET' : 'POST', url, req, isCreate ? body : undefined);
    if (answer.status < 200 || answer.status >= 300) return answer;
    const value = parseExact(answer.body.toString('utf8'));
    const data = isList ? { pets: (value as unknown[]).map(toPet) } : { createPet: toPet(value) };
    return { status: 200, body: Buffer.from(JSON.stringify({ data })) };
  });
}
