import type { IncomingMessage } from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { CODES } from '../codes.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ToolCallSpan, Tracing } from '../observability/tracing.ts';
import type { LaneContext, SharedRequestContext } from '../policy/hand-off.ts';
import type { ToolRequest, ToolSpec } from './tool.ts';

/**
 * Yoga's `fetch`, with the node request as its server context (the client address, the rate
 * limit); `sharedReq`: the tool calls of one MCP request share it, and each counts on its own, under
 * `rateLimitEntry` when its JSON-RPC message was counted already.
 */
export type GraphQLFetch = (
  url: string,
  init: RequestInit,
  context: SharedRequestContext & Pick<LaneContext, 'rateLimitEntry'>,
) => Promise<Response>;

/** What every tool call of one MCP HTTP request shares: the caller, and where its call is recorded. */
export interface CallContext {
  fetch: GraphQLFetch;
  req: IncomingMessage;
  /** `Bearer <key>`, as the caller sent it: Yoga forwards it upstream as any GraphQL request's. */
  authorization: string;
  requestId: string;
  clientAddress: string;
  /** The client's name from MCP `initialize`, when known. */
  clientName: string | undefined;
  logger: Logger;
  metrics: Metrics | undefined;
  /** Tracing, when on: each tool call gets a span, its GraphQL operation's parent. */
  tracing: Tracing | undefined;
  /** Where each tool call's rate-limit decision is kept, by its JSON-RPC id (admission.ts). */
  counted: ReadonlyMap<unknown, object>;
}

interface GraphQLError {
  message?: unknown;
  extensions?: { code?: unknown; argument?: unknown };
}

/** One line per GraphQL error: its message and the code a client acts on (and the argument refused). */
function errorLines(errors: readonly GraphQLError[]): { text: string; codes: string[] } {
  const codes = errors.map((error) =>
    typeof error.extensions?.code === 'string' ? error.extensions.code : CODES.INTERNAL_SERVER_ERROR.code,
  );
  const text = errors
    .map((error, index) => {
      const argument =
        typeof error.extensions?.argument === 'string' ? `, argument ${error.extensions.argument}` : '';
      return `${codes[index]}${argument}: ${String(error.message)}`;
    })
    .join('\n');
  return { text, codes };
}

function toolError(text: string, codes: string[]): { result: CallToolResult; codes: string[] } {
  return { result: { isError: true, content: [{ type: 'text', text }] }, codes };
}

/** Yoga's answer as a tool result: `data` as structured content and the same JSON as text, or a tool error. */
async function resultOf(response: Response): Promise<{ result: CallToolResult; codes?: string[] }> {
  let body: { data?: unknown; errors?: GraphQLError[]; extensions?: { cost?: unknown } } | undefined;
  try {
    body = (await response.json()) as typeof body;
  } catch {
    body = undefined;
  }
  if (body === undefined || typeof body !== 'object' || body === null) {
    return toolError(`The gateway answered HTTP ${response.status} without a GraphQL result.`, [
      CODES.INTERNAL_SERVER_ERROR.code,
    ]);
  }
  // What the call cost (docs/cost.md), where MCP puts what is not the result itself.
  const meta = body.extensions?.cost === undefined ? {} : { _meta: { [COST_META]: body.extensions.cost } };
  if (Array.isArray(body.errors) && body.errors.length > 0) {
    const { text, codes } = errorLines(body.errors);
    const partial = body.data ? `\nPartial data: ${JSON.stringify(body.data)}` : '';
    const { result } = toolError(text + partial, codes);
    return { result: { ...result, ...meta }, codes };
  }
  const data = (body.data ?? {}) as Record<string, unknown>;
  return {
    result: { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data, ...meta },
  };
}

/** The `_meta` key of a tool result's cost: its GraphQL answer's `extensions.cost`. */
export const COST_META = 'pet-gateway/cost';

/** The GraphQL request a call sends: through Yoga, so every limit, the cost, trusted documents and the rate limit apply. */
function send(
  call: CallContext,
  request: ToolRequest,
  span: ToolCallSpan | undefined,
  rateLimitEntry: object | undefined,
): Promise<Response> {
  return call.fetch(
    'http://gateway/graphql',
    {
      method: 'POST',
      headers: {
        authorization: call.authorization,
        'content-type': 'application/json',
        accept: 'application/json',
        'x-request-id': call.requestId,
        // Deprecated fields' uses are counted by client name, as for any GraphQL client.
        ...(call.clientName ? { 'graphql-client-name': call.clientName } : {}),
        ...span?.headers(),
      },
      body: JSON.stringify(request),
    },
    { req: call.req, sharedReq: true, ...(rateLimitEntry ? { rateLimitEntry } : {}) },
  );
}

/**
 * Runs one tool call as a GraphQL request through Yoga, the server of record, with the caller's
 * key, and writes its log line and metrics. Never throws: every failure is a tool error a model
 * reads, without a stack or the key.
 */
export async function runToolCall(
  tool: ToolSpec,
  args: Record<string, unknown>,
  call: CallContext,
  rpcId: unknown,
): Promise<CallToolResult> {
  const started = performance.now();
  const span = call.tracing?.startToolCall((name) => headerOf(call.req, name), tool.name);
  let outcome: { result: CallToolResult; codes?: string[] };
  try {
    const request = tool.request(args);
    outcome =
      'refused' in request
        ? toolError(request.refused, [CODES.BAD_USER_INPUT.code])
        : await resultOf(await send(call, request, span, call.counted.get(rpcId)));
  } catch (error) {
    call.logger.error({ err: error, requestId: call.requestId, tool: tool.name }, 'mcp tool call failed');
    outcome = toolError('The gateway could not run this tool call; see its log for the request id.', [
      CODES.INTERNAL_SERVER_ERROR.code,
    ]);
  }
  const durationMs = Math.round((performance.now() - started) * 100) / 100;
  const failed = outcome.result.isError === true;
  span?.end(failed ? { codes: outcome.codes ?? [] } : undefined);
  call.logger.info(
    {
      requestId: call.requestId,
      clientAddress: call.clientAddress,
      tool: tool.name,
      client: call.clientName ?? null,
      outcome: failed ? 'error' : 'ok',
      durationMs,
      ...(outcome.codes ? { codes: outcome.codes } : {}),
    },
    'mcp tool call',
  );
  call.metrics?.mcpToolCall({
    tool: tool.name,
    outcome: failed ? 'error' : 'ok',
    client: call.clientName,
    seconds: durationMs / 1000,
  });
  return outcome.result;
}

export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}
