import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool } from 'undici';

/**
 * The baseline: what the cheapest possible Node hop costs. One undici request per REST call to the
 * same upstream with the caller's Authorization, the bytes returned untouched; no GraphQL, no
 * parsing, no validation. Routes mirror the REST paths without the `/v1` prefix.
 */
export interface BareProxy {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

/** Same pool size as the gateway's production default (UPSTREAM_CONNECTIONS). */
const CONNECTIONS = 64;
const TIMEOUT_MS = 5000;

interface Forwarded {
  status: number;
  body: Buffer;
}

/**
 * `GET /pets?…`, `GET /pets/{id}` and `POST /pets` forward one call each. `GET /pets-by-ids?ids=a,b,…`
 * makes one `GET /pets/{id}` per id in parallel and returns their bodies as a JSON array: the same
 * upstream calls the gateway's de-duplicated alias workload makes, for a like-for-like baseline.
 */
export function createBareProxy(upstreamUrl: URL): BareProxy {
  const basePath = upstreamUrl.pathname.replace(/\/+$/, '');
  const pool = new Pool(upstreamUrl.origin, {
    connections: CONNECTIONS,
    pipelining: 1,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });

  async function forward(
    method: 'GET' | 'POST',
    path: string,
    authorization: string | undefined,
    body?: Buffer,
  ): Promise<Forwarded> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (authorization !== undefined) headers.authorization = authorization;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await pool.request({ method, path: basePath + path, headers, body });
    return { status: response.statusCode, body: Buffer.from(await response.body.arrayBuffer()) };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const authorization = req.headers.authorization;
    let answer: Forwarded;
    if (url.startsWith('/pets-by-ids?')) {
      const ids = new URLSearchParams(url.slice('/pets-by-ids?'.length)).get('ids')?.split(',') ?? [];
      const answers = await Promise.all(
        ids.map((id) => forward('GET', `/pets/${encodeURIComponent(id)}`, authorization)),
      );
      const failed = answers.find((a) => a.status !== 200);
      answer = failed ?? {
        status: 200,
        body: Buffer.concat([
          Buffer.from('['),
          ...answers.flatMap((a, i) => (i === 0 ? [a.body] : [Buffer.from(','), a.body])),
          Buffer.from(']'),
        ]),
      };
    } else if (url.startsWith('/pets') && (req.method === 'GET' || req.method === 'POST')) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      answer = await forward(
        req.method,
        url,
        authorization,
        req.method === 'POST' ? Buffer.concat(chunks) : undefined,
      );
    } else {
      req.resume();
      answer = { status: 404, body: Buffer.from('{"code":"NOT_FOUND","message":"no route","status":404}') };
    }
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'content-length': answer.body.length,
    });
    res.end(answer.body);
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
