import { Pool } from 'undici';

/** Same pool size as the gateway's production default (UPSTREAM_CONNECTIONS). */
const CONNECTIONS = 64;
const TIMEOUT_MS = 5000;

/** An upstream answer, read whole. */
export interface Forwarded {
  status: number;
  body: Buffer;
}

/** One undici request per call to the upstream, as the bench's hand-written hops make them. */
export interface UpstreamPool {
  forward(
    method: 'GET' | 'POST',
    path: string,
    authorization: string | undefined,
    body?: Buffer,
  ): Promise<Forwarded>;
  close(): Promise<void>;
}

/**
 * A keep-alive pool to the upstream's origin; `path` is relative to the upstream URL's path (its
 * `/v1`), and the caller's Authorization is passed on as the gateway passes it.
 */
export function createUpstreamPool(upstreamUrl: URL): UpstreamPool {
  const basePath = upstreamUrl.pathname.replace(/\/+$/, '');
  const pool = new Pool(upstreamUrl.origin, {
    connections: CONNECTIONS,
    pipelining: 1,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  return {
    async forward(method, path, authorization, body) {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (authorization !== undefined) headers.authorization = authorization;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await pool.request({ method, path: basePath + path, headers, body });
      return { status: response.statusCode, body: Buffer.from(await response.body.arrayBuffer()) };
    },
    close: () => pool.close(),
  };
}
