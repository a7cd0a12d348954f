import type { ServerResponse } from 'node:http';

/**
 * A fetch `Response` written onto node's `ServerResponse`, with `headers` laid over its own: how
 * the rooms that ask Yoga's fetch (or the MCP SDK's) answer their client (mcp/, rest/). A 304 or
 * 204 carries no body, so no Content-Length is said for one.
 */
export async function writeFetchAnswer(
  res: ServerResponse,
  response: Response,
  headers: Record<string, string> = {},
): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const own: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    own[name] = value;
  });
  const bodiless = response.status === 304 || response.status === 204;
  res.writeHead(response.status, {
    ...own,
    ...headers,
    ...(bodiless ? {} : { 'content-length': String(body.length) }),
  });
  res.end(bodiless ? undefined : body);
}
