import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpEndpointOptions } from './endpoint.ts';
import { INTERNAL_ERROR, isMcpPath, rpcError } from './http.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * `/mcp`, its endpoint (and the MCP SDK) loaded on its first request: a quarter of a second of
 * every start that a gateway no assistant calls never needs. The request's body waits, unread,
 * meanwhile.
 */
export function mcpOnFirstUse(options: McpEndpointOptions): Handler {
  let endpoint: Promise<Handler> | undefined;
  return (req, res) => {
    if (!isMcpPath(req.url)) return false;
    endpoint ??= import('./endpoint.ts').then(({ createMcpEndpoint }) => createMcpEndpoint(options));
    endpoint.then(
      (serve) => serve(req, res),
      (error: unknown) => {
        options.logger.error({ err: error }, 'mcp endpoint failed to load');
        rpcError(res, 500, INTERNAL_ERROR, 'Internal error: see the gateway log.');
      },
    );
    return true;
  };
}
