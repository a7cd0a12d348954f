import type { IncomingMessage } from 'node:http';
import type { Tracing } from '../observability/tracing.ts';
import type { AcceptedKeys } from '../policy/accepted-keys.ts';
import { type RateLimit, type RateLimitDecision, refusalOf } from '../policy/rate-limit.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { UpstreamResponseError } from '../upstream/errors.ts';
import { messagesOf, methodOf } from './messages.ts';

/*
 * What /graphql's rules ask of an MCP request once its body is read: each JSON-RPC message counts
 * against the rate limit, and nothing beyond `initialize` is served to a key the upstream has not
 * accepted.
 */

/** A request refused whole: its HTTP status and headers, and the JSON-RPC error's message and data. */
export interface Refusal {
  status: number;
  /** The JSON-RPC error code, when not the server's own (-32000). */
  code?: number;
  headers: Record<string, string>;
  message: string;
  data?: Record<string, unknown>;
}

/** Each tool call's rate-limit decision, kept under an object of its own, by the call's JSON-RPC id. */
export type CountedCalls = ReadonlyMap<unknown, object>;

/** /graphql's refusal (policy/rate-limit.ts), as an MCP request refused whole carries it. */
function rateLimitRefusal(decision: Extract<RateLimitDecision, { limited: true }>): Refusal {
  const { message, extensions } = refusalOf(decision);
  const { status, headers } = extensions.http as { status: number; headers: Record<string, string> };
  return { status, headers, message, data: { code: extensions.code, retryAfter: extensions.retryAfter } };
}

/**
 * Counts every message of the request against the rate limit, as /graphql counts each operation of
 * a batch, one after another (a key not accepted yet takes one point of its address's refused-keys
 * budget, not one per message). A tool call's decision is kept for the GraphQL request it becomes,
 * so it counts once, and over the limit it is a RATE_LIMITED tool error a model reads; any other
 * message over the limit refuses the whole request 429.
 */
export async function countMessages(
  limit: RateLimit | undefined,
  req: IncomingMessage,
  authorization: string,
  body: unknown,
): Promise<{ calls: CountedCalls } | { refused: Refusal }> {
  const calls = new Map<unknown, object>();
  if (limit === undefined) return { calls };
  let over: Extract<RateLimitDecision, { limited: true }> | undefined;
  for (const message of messagesOf(body)) {
    const entry = {};
    const decision = await limit.check(req, authorization, entry);
    if (methodOf(message) === 'tools/call') {
      const id = (message as { id?: unknown }).id;
      if (!calls.has(id)) calls.set(id, entry);
    } else if (decision.limited) over ??= decision;
  }
  return over ? { refused: rateLimitRefusal(over) } : { calls };
}

/** What a client asks before it has used its key: the handshake, or 2026-07-28's discovery. */
const BEFORE_ANY_USE = new Set(['initialize', 'server/discover']);

/** Whether the request asks for more than the handshake: notifications answer nothing. */
function servesMore(body: unknown): boolean {
  return messagesOf(body).some((message) => {
    const method = methodOf(message);
    return method !== undefined && !BEFORE_ANY_USE.has(method) && !method.startsWith('notifications/');
  });
}

const KEY_REFUSED =
  "The animal store refused this API key: check the key in your MCP client's configuration (see docs/mcp.md).";

/**
 * Refuses a key the upstream refuses before anything beyond `initialize` or `server/discover` is
 * served with it. A key
 * the upstream has accepted (acceptedKeys, which this check and the upstream's answers feed) passes
 * at once; another is checked with the cheapest call the contract has, whose answer the rate limit
 * learns from as from any call (a refused key keeps its refused-keys point). Undefined: admitted.
 */
export async function keyRefusal(
  keys: { acceptedKeys?: AcceptedKeys; upstream: UpstreamClient; tracing?: Tracing | undefined },
  authorization: string,
  body: unknown,
  header: (name: string) => string | undefined,
): Promise<Refusal | undefined> {
  if (!servesMore(body) || keys.acceptedKeys?.has(authorization)) return undefined;
  const check = () => keys.upstream.listPets(authorization, { limit: 1 });
  try {
    // The check is the caller's request's doing: its span goes in the caller's trace.
    await (keys.tracing ? keys.tracing.inCallerTrace(header, check) : check());
    keys.acceptedKeys?.accept(authorization);
    return undefined;
  } catch (error) {
    if (error instanceof UpstreamResponseError && error.status === 401) {
      return {
        status: 401,
        headers: { 'www-authenticate': 'Bearer realm="pet-gateway", error="invalid_token"' },
        message: KEY_REFUSED,
        data: { code: error.code },
      };
    }
    return {
      status: 503,
      headers: { 'retry-after': '1' },
      message: 'The animal store could not be asked whether it accepts this API key; retry shortly.',
    };
  }
}
