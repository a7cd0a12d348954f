/**
 * The hand-written Node hops the gateway is measured against: the bare proxy (the cheapest Node hop)
 * and the JSON hop (the floor for any gateway that rewrites the body). Both make one undici request
 * per REST call with the caller's Authorization over a keep-alive pool as large as the gateway's
 * default (UPSTREAM_CONNECTIONS); neither does GraphQL. Routes are the REST paths without `/v1`.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Pool } from 'undici';

interface Forwarded {
  status: number;
  body: Buffer;
}

type Forward = (req: IncomingMessage, path: string, body?: Buffer) => Promise<Forwarded>;

/** A hop over `upstreamUrl`: `handle` answers each request, given a `forward` to the upstream; 502 when it throws. */
function hop(
  upstreamUrl: URL,
  handle: (req: IncomingMessage, forward: Forward) => Promise<Forwarded>,
): RequestListener {
  const basePath = upstreamUrl.pathname.replace(/\/+$/, '');
  const pool = new Pool(upstreamUrl.origin, {
    connections: 64,
    pipelining: 1,
    headersTimeout: 5000,
    bodyTimeout: 5000,
  });
  const forward: Forward = async (req, path, body) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (req.headers.authorization !== undefined) headers.authorization = req.headers.authorization;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const method = body === undefined ? 'GET' : 'POST';
    const response = await pool.request({ method, path: basePath + path, headers, body });
    return { status: response.statusCode, body: Buffer.from(await response.body.arrayBuffer()) };
  };
  const send = (res: ServerResponse, { status, body }: Forwarded) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  };
  return (req, res) => {
    handle(req, forward).then(
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

const NOT_FOUND: Forwarded = {
  status: 404,
  body: Buffer.from('{"code":"NOT_FOUND","message":"no route","status":404}'),
};

const [OPEN, COMMA, CLOSE] = ['[', ',', ']'].map((text) => Buffer.from(text)) as [Buffer, Buffer, Buffer];

/** The request's body when it is a POST, read whole; a GET's is drained. */
async function postBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return req.method === 'POST' ? Buffer.concat(chunks) : undefined;
}

/**
 * Bytes returned untouched: `GET /pets?…`, `GET /pets/{id}` and `POST /pets` forward one call each;
 * `GET /pets-by-ids?ids=a,b,…` makes one `GET /pets/{id}` per id in parallel and returns their bodies
 * as a JSON array: the upstream calls the gateway's de-duplicated alias workload makes.
 */
export function createBareProxy(upstreamUrl: URL): RequestListener {
  return hop(upstreamUrl, async (req, forward) => {
    const url = req.url ?? '/';
    if (url.startsWith('/pets-by-ids?')) {
      const ids = new URLSearchParams(url.slice('/pets-by-ids?'.length)).get('ids')?.split(',') ?? [];
      const answers = await Promise.all(ids.map((id) => forward(req, `/pets/${encodeURIComponent(id)}`)));
      const parts = answers.flatMap((a, i) => (i === 0 ? [a.body] : [COMMA, a.body]));
      return (
        answers.find((a) => a.status !== 200) ?? { status: 200, body: Buffer.concat([OPEN, ...parts, CLOSE]) }
      );
    }
    if (url.startsWith('/pets') && (req.method === 'GET' || req.method === 'POST')) {
      return forward(req, url, await postBody(req));
    }
    req.resume();
    return NOT_FOUND;
  });
}

/** Holds a number literal's source text, for an int64 a double would round. */
class Int64Source {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

const unsafe = (value: unknown) => typeof value === 'number' && !Number.isSafeInteger(value);

/**
 * A plain JSON.parse, and again with a reviver keeping int64 source text only when the first found
 * an id beyond 2^53: exactness costs the second parse only to bodies that need it, as in the gateway.
 */
function parseExact(text: string): unknown {
  const value = JSON.parse(text) as unknown;
  const records = (Array.isArray(value) ? value : [value]) as Array<Record<string, unknown> | null>;
  if (!records.some((r) => r !== null && typeof r === 'object' && (unsafe(r.id) || unsafe(r.categoryId))))
    return value;
  return JSON.parse(text, (key, v, context?: { source?: string }) =>
    (key === 'id' || key === 'categoryId') && typeof v === 'number' && context?.source !== undefined
      ? new Int64Source(context.source)
      : v,
  );
}

const ENUM: Readonly<Record<string, string>> = { available: 'AVAILABLE', pending: 'PENDING', sold: 'SOLD' };
const int64 = (value: unknown) => (value instanceof Int64Source ? value.source : String(value));

function toPet(raw: unknown) {
  const pet = raw as Record<string, unknown>;
  return {
    id: int64(pet.id),
    name: pet.name,
    categoryId: int64(pet.categoryId),
    status: typeof pet.status === 'string' ? (ENUM[pet.status] ?? null) : null,
  };
}

/**
 * The upstream's JSON parsed, each pet mapped to the gateway's output (ids as decimal strings,
 * status as the enum) and re-serialised in a GraphQL-shaped envelope with status 200:
 * `GET /pets?…` → `{"data":{"pets":[…]}}`, `POST /pets` → `{"data":{"createPet":{…}}}`. An upstream
 * failure is passed on as it is.
 */
export function createJsonHop(upstreamUrl: URL): RequestListener {
  return hop(upstreamUrl, async (req, forward) => {
    const url = req.url ?? '/';
    const isList = req.method === 'GET' && (url === '/pets' || url.startsWith('/pets?'));
    if (!isList && !(req.method === 'POST' && url === '/pets')) {
      req.resume();
      return NOT_FOUND;
    }
    const answer = await forward(req, url, await postBody(req));
    if (answer.status < 200 || answer.status >= 300) return answer;
    const value = parseExact(answer.body.toString('utf8'));
    const data = isList ? { pets: (value as unknown[]).map(toPet) } : { createPet: toPet(value) };
    return { status: 200, body: Buffer.from(JSON.stringify({ data })) };
  });
}
