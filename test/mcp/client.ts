import {
  Client as Client2026,
  StreamableHTTPClientTransport as Transport2026,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The SDK's own client over Streamable HTTP, as an assistant connects: the caller's key in every request. */
export async function connectMcp(
  origin: string,
  key: string,
  name = 'vitest-assistant',
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', origin), {
    requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

/** Calls a tool and returns its result as the protocol types it. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The first text content of a result. */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

/** A raw JSON-RPC POST to /mcp, as a client that speaks no SDK would send it. */
export function rawPost(origin: string, headers: Record<string, string>, body: unknown): Promise<Response> {
  return fetch(new URL('/mcp', origin), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};

/** What a 2026-07-28 client's user answers when a tool asks to confirm: accept, decline, or never asked. */
export type { Client2026 };

export type Confirm = (message: string) => 'accept' | 'decline';

/**
 * The SDK's 2.x client, pinned to 2026-07-28 (no handshake, `_meta` on each request). With
 * `confirm`, it declares elicitation and answers a tool's confirmation as that user would.
 */
export async function connectMcp2026(
  origin: string,
  key: string,
  confirm?: Confirm,
  name = 'vitest-assistant-2026',
): Promise<Client2026> {
  const client = new Client2026(
    { name, version: '2.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      ...(confirm ? { capabilities: { elicitation: { form: {} } } } : {}),
    },
  );
  if (confirm) {
    client.setRequestHandler('elicitation/create', async (request) => {
      const action = confirm(String(request.params.message));
      return action === 'accept' ? { action, content: { confirm: true } } : { action };
    });
  }
  const transport = new Transport2026(new URL('/mcp', origin), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

/** The `_meta` a 2026-07-28 request carries, and the headers that must agree with it. */
export function envelope(
  method: string,
  name?: string,
  capabilities: Record<string, unknown> = {},
): { meta: Record<string, unknown>; headers: Record<string, string> } {
  return {
    meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': capabilities,
      'io.modelcontextprotocol/clientInfo': { name: 'curl-2026', version: '1' },
    },
    headers: {
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    },
  };
}

/** A raw 2026-07-28 request: the method, its params with the envelope, the matching headers. */
export function modernPost(
  origin: string,
  headers: Record<string, string>,
  method: string,
  params: Record<string, unknown> = {},
  id: number | string = 1,
  capabilities: Record<string, unknown> = {},
): Promise<Response> {
  const name = method === 'tools/call' ? String(params.name) : undefined;
  const { meta, headers: own } = envelope(method, name, capabilities);
  return rawPost(
    origin,
    { ...own, ...headers },
    { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } },
  );
}
