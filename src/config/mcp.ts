import { boolean, ConfigError, MIN_SECRET_LENGTH, nonEmpty } from './env-values.ts';

/**
 * MCP (on/off): the Model Context Protocol endpoint at `/mcp` (src/mcp/), for assistants calling
 * the gateway's tools with their user's key. On by default: it adds no new power (every tool call
 * is a GraphQL request with the caller's key, held to every limit), only a protocol assistants speak.
 */
export function mcpEnabled(env: Record<string, string | undefined>): boolean {
  return boolean(env, 'MCP', true);
}

/**
 * MCP_STATE_SECRET: signs the state a write tool's question to its user carries (src/mcp/confirm.ts),
 * so the answer may reach another instance. Unset: the workers of one start share one of their own.
 */
export function mcpStateSecret(env: Record<string, string | undefined>): string | undefined {
  const secret = nonEmpty(env, 'MCP_STATE_SECRET');
  if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      `MCP_STATE_SECRET must be at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32), got ${secret.length}`,
    );
  }
  return secret;
}
