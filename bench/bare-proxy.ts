import type { IncomingMessage, ServerResponse } from 'node:http';
import { createUpstreamPool, type Forwarded } from './upstream-pool.ts';

/**
 * The baseline: what the cheapest possible Node hop costs. One undici request per REST call to the
 * same upstream with the caller's Authorization, the bytes returned untouched; no GraphQL, no
 * parsing, no validation. Routes mirror the REST paths without the `/v1` prefix.
 */
export interface BareProxy {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

/**
 * `GET /pets?…`, `GET /pets/{id}` and `POST /pets` forward one call each. `GET /pets-by-ids?ids=a,b,…`
 * makes one `GET /pets/{id}` per id in parallel and returns their bodies as a JSON array: the same
 * upstream calls the gateway's de-duplicated alias workload makes, for a like-for-like baseline.
 */
export function createBareProxy(upstreamUrl: URL): BareProxy {
  const pool = createUpstreamPool(upstreamUrl);
  const forward = pool.forward;

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
