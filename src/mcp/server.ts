import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { type Confirmations, confirmationFirst } from './confirm.ts';
import { type CallContext, runToolCall } from './graphql-call.ts';
import { annotationsOf, type ToolSpec } from './tool.ts';

/** Where the schema is offered to assistants writing their own queries. */
export const SCHEMA_URI = 'graphql://schema';

const INSTRUCTIONS =
  "The animal store behind this GraphQL gateway, with the user's own API key: every tool call is one GraphQL request, held to the gateway's limits, cost and rate limit. Ids are 64-bit integers as decimal strings: copy them exactly. Ask the user before a tool that changes the store.";

/**
 * 2026-07-28's caching hints: the lists, the schema and what the server declares are the same for
 * every caller and change only when the gateway is deployed again, so any cache may keep them a
 * while (a rolling deploy's new tools reach a client within the TTL).
 */
const SHARED_FOR_A_WHILE = { ttlMs: 300_000, cacheScope: 'public' } as const;
const CACHE_HINTS = {
  'tools/list': SHARED_FOR_A_WHILE,
  'resources/list': SHARED_FOR_A_WHILE,
  'resources/templates/list': SHARED_FOR_A_WHILE,
  'resources/read': SHARED_FOR_A_WHILE,
  'server/discover': SHARED_FOR_A_WHILE,
};

/**
 * A new MCP server for one HTTP request (stateless: no session outlives the request), offering
 * `tools`, each call run by runToolCall with the request's caller (a write asked of its user first,
 * where the client can ask: confirm.ts), and the schema as a resource
 * when `schemaText` is given (introspection on).
 */
export function createMcpServer(
  tools: readonly ToolSpec[],
  schemaText: string | undefined,
  call: CallContext,
  confirmations: Confirmations,
): McpServer {
  const server = new McpServer(
    { name: 'pet-gateway', version: '0.1.0' },
    {
      instructions: INSTRUCTIONS,
      cacheHints: CACHE_HINTS,
      // A question's state is checked before the tool runs: a tampered or expired one is -32602.
      requestState: { verify: (state, ctx) => confirmations.verify(state, ctx) },
    },
  );
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        // Strict: an argument the tool does not declare (a misspelled `limit`) is refused, naming it,
        // as the SDK refuses any invalid argument (a tool error the model reads and corrects), rather
        // than dropped while the call runs as if it had not been sent.
        inputSchema: z.strictObject(tool.input),
        outputSchema: tool.output instanceof z.ZodObject ? tool.output : z.object(tool.output),
        annotations: annotationsOf(tool),
      },
      async (args: Record<string, unknown>, ctx) =>
        (await confirmationFirst(tool, args, ctx, call.authorization, confirmations)) ??
        runToolCall(tool, args, call, ctx.mcpReq.id),
    );
  }
  if (schemaText !== undefined) {
    server.registerResource(
      'schema',
      SCHEMA_URI,
      {
        title: 'The GraphQL schema',
        description: "The gateway's GraphQL schema (SDL), for writing run_query's queries.",
        mimeType: 'application/graphql',
      },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: 'application/graphql', text: schemaText }] }),
    );
  }
  // The SDK declares that it announces changes to these lists; a server that lives for one request
  // never announces anything, and its lists are the same on every request.
  server.server.registerCapabilities({
    tools: { listChanged: false },
    ...(schemaText === undefined ? {} : { resources: { listChanged: false } }),
  });
  return server;
}
