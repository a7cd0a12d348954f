import type { IncomingMessage, ServerResponse } from 'node:http';
import { CODES } from '../codes.ts';
import { refuse } from '../policy/error-body.ts';

/*
 * The paths people try before reading: `/` (a browser opened on the bare origin) and the probe
 * names other services use (`/ready`, `/healthz`). Each answers where the gateway's endpoints are.
 * The probe names stay 404: a probe pointed at them must fail, not pass on a page about the others.
 */

const PATHS = { graphql: '/graphql', health: '/health', readiness: '/readiness' } as const;
const MESSAGE =
  'pet-gateway: GraphQL (GraphiQL in a browser) is at /graphql, liveness at /health, readiness at /readiness';

const JSON_BODY = JSON.stringify({ message: MESSAGE, ...PATHS });
const HTML_BODY = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pet-gateway</title></head>
<body><p>pet-gateway: <a href="/graphql">/graphql</a> (GraphQL, and GraphiQL in a browser),
<a href="/health">/health</a> (liveness), <a href="/readiness">/readiness</a> (readiness).</p></body></html>
`;

/** The status a signposted path answers with, or undefined for every other path. */
function statusOf(url: string | undefined): number | undefined {
  if (url === undefined || url[0] !== '/') return undefined;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (path === '/') return 200;
  return path === '/ready' || path === '/healthz' ? 404 : undefined;
}

/** Answers `/`, `/ready` and `/healthz` (HTML when the caller accepts it, else JSON); false for any other path. */
export function signpost(req: IncomingMessage, res: ServerResponse): boolean {
  // Every request passes here: only `/`, `/?…`, `/r…` and `/h…` are looked at further.
  const second = req.url?.charCodeAt(1);
  if (
    !(second === undefined || Number.isNaN(second) || second === 0x3f || second === 0x72 || second === 0x68)
  )
    return false;
  const status = statusOf(req.url);
  if (status === undefined) return false;
  const html = req.headers.accept?.includes('text/html') === true;
  const body = html ? HTML_BODY : JSON_BODY;
  res.writeHead(status, {
    'content-type': html ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    vary: 'accept',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}

const NOT_FOUND_MESSAGE = `No such path. ${MESSAGE.replace('pet-gateway: ', '')}.`;

/**
 * Answers 404 NOT_FOUND, with the code a client reads and where to go, for a path none of the
 * gateway's endpoints serves (Yoga would answer a bare 404); false for a path in `served`.
 */
export function unknownPath(
  served: ReadonlySet<string>,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const url = req.url ?? '';
    // Every GraphQL request passes here: the common case costs one comparison.
    if (url.startsWith('/graphql') && (url.length === 8 || url[8] === '?')) return false;
    const query = url.indexOf('?');
    if (served.has(query === -1 ? url : url.slice(0, query))) return false;
    refuse(res, CODES.NOT_FOUND, NOT_FOUND_MESSAGE);
    return true;
  };
}
