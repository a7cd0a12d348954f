import {
  type JSONRPCMessage,
  type StandardSchemaV1Sync,
  specTypeSchemas,
  type Transport,
} from '@modelcontextprotocol/server';
import { INVALID_PARAMS } from './http.ts';

/*
 * The JSON-RPC messages of one request, as the gateway reads them before the SDK does: which
 * method each names, and whether a request's params are what its method takes.
 */

/** The requests this server answers, by method, with the SDK's own schema of each. */
const REQUESTS = new Map<string, StandardSchemaV1Sync>([
  ['initialize', specTypeSchemas.InitializeRequest],
  ['ping', specTypeSchemas.PingRequest],
  ['tools/list', specTypeSchemas.ListToolsRequest],
  ['tools/call', specTypeSchemas.CallToolRequest],
  ['resources/list', specTypeSchemas.ListResourcesRequest],
  ['resources/templates/list', specTypeSchemas.ListResourceTemplatesRequest],
  ['resources/read', specTypeSchemas.ReadResourceRequest],
]);

/** The messages of a body: a batch's entries, or the one message. */
export function messagesOf(body: unknown): unknown[] {
  return Array.isArray(body) ? body : [body];
}

/** The id of a body that is one request: what the answer to it, refusals included, must carry. */
export function idOf(body: unknown): string | number | null {
  const id =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { id?: unknown }).id : null;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** The method a message names; undefined for a response or anything that is no message. */
export function methodOf(message: unknown): string | undefined {
  const method =
    typeof message === 'object' && message !== null ? (message as { method?: unknown }).method : undefined;
  return typeof method === 'string' ? method : undefined;
}

/** `params.arguments` → `arguments`: what a client wrote inside `params`. */
function nameOf(path: readonly PropertyKey[]): string {
  const inside = path[0] === 'params' ? path.slice(1) : path;
  return inside.length === 0 ? 'params' : inside.map(String).join('.');
}

/** Why a request's params are not what its method takes, in a sentence naming them; undefined when they are. */
function paramsProblem(message: JSONRPCMessage): string | undefined {
  if (!('method' in message) || !('id' in message)) return undefined;
  const issues = REQUESTS.get(message.method)?.['~standard'].validate(message).issues;
  if (issues === undefined || issues.length === 0) return undefined;
  const named = issues.slice(0, 3).map((issue) => {
    const path = (issue.path ?? []).map((key) => (typeof key === 'object' ? key.key : key));
    return `${nameOf(path)}: ${issue.message.replace(/^Invalid input: /, '')}`;
  });
  return `Invalid params: ${named.join('; ')}.`;
}

/**
 * Answers a request whose params its method does not take with JSON-RPC's Invalid params (-32602),
 * naming them. Left to the SDK, its handler's parse throws, and the answer is Internal error
 * (-32603) holding the validator's issues as JSON: the wrong code, and nothing a person reads.
 */
export function refuseInvalidParams(transport: Transport): void {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const problem = paramsProblem(message);
    if (problem === undefined || !('id' in message)) return deliver?.(message, extra);
    void transport.send({
      jsonrpc: '2.0',
      id: message.id,
      error: { code: INVALID_PARAMS, message: problem },
    });
  };
}
