import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/*
 * The HTTP around MCP's JSON-RPC: refusals as JSON-RPC errors (never a stack or a token), the
 * capped body, and the client's name carried from `initialize` to later requests.
 */

/** Whether a request is for `/mcp` (with or without a query string). */
export function isMcpPath(url: string | undefined): boolean {
  return url === '/mcp' || url?.startsWith('/mcp?') === true;
}

/**
 * Answers `status` with a JSON-RPC error, with the request's `id` when its body was read and held
 * one request (messages.ts, idOf); null otherwise, as JSON-RPC says for a request not read.
 */
export function rpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  data?: Record<string, unknown>,
  id: string | number | null = null,
): void {
  const error = data === undefined ? { code, message } : { code, message, data };
  const body = JSON.stringify({ jsonrpc: '2.0', error, id });
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': String(Buffer.byteLength(body)),
    ...headers,
  });
  res.end(body);
}

/**
 * JSON-RPC's codes for a body that is not JSON, one that is no valid request, params its method
 * does not take, a failure of the server's own, and this server's refusals.
 */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const SERVER_ERROR = -32000;

/**
 * How deep a body's arrays and objects may nest. A tool call's arguments are written out again as
 * the GraphQL request Yoga runs, and JSON.stringify recurses: some thousands deep, it overflows the
 * stack. Nothing a tool takes nests past a few levels.
 */
export const MAX_JSON_DEPTH = 64;

/** A client name fit for a log line and a label: what clients send (`Claude Desktop`, `vscode`), bounded. */
function cleanName(name: unknown): string | undefined {
  return typeof name === 'string' && /^[\w .@/:+()-]{1,64}$/.test(name) ? name : undefined;
}

/** The client's name, when the body is (or a batch holds) MCP's `initialize`. */
export function initializingClient(body: unknown): { name: string | undefined } | undefined {
  const messages = Array.isArray(body) ? body : [body];
  const init = messages.find(
    (message) => typeof message === 'object' && message !== null && message.method === 'initialize',
  ) as { params?: { clientInfo?: { name?: unknown } } } | undefined;
  return init && { name: cleanName(init.params?.clientInfo?.name) };
}

/** The client's name a 2026-07-28 request carries in its `_meta` (the first message of a batch). */
export function clientOfMeta(body: unknown): string | undefined {
  const first = Array.isArray(body) ? body[0] : body;
  const meta = (first as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  const info = meta?.['io.modelcontextprotocol/clientInfo'] as { name?: unknown } | undefined;
  return cleanName(info?.name);
}

/**
 * The `Mcp-Session-Id` given with `initialize`'s answer. The server keeps no session (each request
 * is served alone, on any worker or instance); the id only carries the client's self-declared
 * name, which clients send back with every request, so each tool call's log line and metrics name
 * the client. A fresh UUID keeps ids unique, as the specification asks.
 */
export function sessionIdFor(clientName: string | undefined): string {
  const name = clientName === undefined ? '' : `.${Buffer.from(clientName).toString('base64url')}`;
  return randomUUID() + name;
}

/** The client's name from a `Mcp-Session-Id` sessionIdFor made; undefined for any other. */
export function clientOfSession(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const encoded = /^[0-9a-f-]{36}\.([\w-]{1,88})$/.exec(header)?.[1];
  return encoded === undefined ? undefined : cleanName(Buffer.from(encoded, 'base64url').toString('utf8'));
}

/** The node request's headers as a fetch `Headers`, for the SDK's web-standard transport. */
export function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(', '));
  }
  return headers;
}
