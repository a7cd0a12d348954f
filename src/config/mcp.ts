import { boolean } from './env-values.ts';

/**
 * MCP (on/off): the Model Context Protocol endpoint at `/mcp` (src/mcp/), for assistants calling
 * the gateway's tools with their user's key. On by default: it adds no new power (every tool call
 * is a GraphQL request with the caller's key, held to every limit), only a protocol assistants speak.
 */
export function mcpEnabled(env: Record<string, string | undefined>): boolean {
  return boolean(env, 'MCP', true);
}
