import type { IncomingMessage, ServerResponse } from 'node:http';
import { createUpstreamPool } from './upstream-pool.ts';

/**
 * The floor for any gateway that rewrites the body: the bare proxy's hop (node:http + one undici
 * request per REST call), but the upstream's JSON is parsed, each pet mapped to the fields and
 * forms the gateway returns (ids as decimal strings, status as the GraphQL enum), and re-serialised
 * in a GraphQL-shaped envelope. No GraphQL: no document, no validation, no execution.
 */
export interface JsonHop {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
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
 * `GET /pets?…` answers `{"data":{"pets":[…]}}` and `POST /pets` answers `{"data":{"createPet":{…}}}`,
 * both with status 200 as the gateway does; an upstream failure is passed on with its status and body.
 */
export function createJsonHop(upstreamUrl: URL): JsonHop {
  const pool = createUpstreamPool(upstreamUrl);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    let status: number;
    let body: Buffer;
    const isList = req.method === 'GET' && (url === '/pets' || url.startsWith('/pets?'));
    const isCreate = req.method === 'POST' && url === '/pets';
    if (isList || isCreate) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const answer = await pool.forward(
        isList ? 'GET' : 'POST',
        url,
        req.headers.authorization,
        isCreate ? Buffer.concat(chunks) : undefined,
      );
      status = answer.status;
      body = answer.body;
      if (status >= 200 && status < 300) {
        const value = parseExact(body.toString('utf8'));
        const data = isList ? { pets: (value as unknown[]).map(toPet) } : { createPet: toPet(value) };
        status = 200;
        body = Buffer.from(JSON.stringify({ data }));
      }
    } else {
      req.resume();
      status = 404;
      body = Buffer.from('{"code":"NOT_FOUND","message":"no route","status":404}');
    }
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  }

  return {
    handler: (req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (res.headersSent) return res.destroy();
        const body = Buffer.from(
          JSON.stringify({ code: 'BAD_GATEWAY', message: String(error), status: 502 }),
        );
        res.writeHead(502, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
      });
    },
    close: () => pool.close(),
  };
}
