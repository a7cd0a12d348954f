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
