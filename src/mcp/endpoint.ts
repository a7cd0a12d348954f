import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import { nestsDeeperThan } from '../contract/json-depth.ts';
import type { Metrics } from '../observability/metrics.ts';
import { requestIdOf } from '../observability/request-id.ts';
import type { Tracing } from '../observability/tracing.ts';
import type { AcceptedKeys } from '../policy/accepted-keys.ts';
import { readCapped } from '../policy/body-cap.ts';
import { writeFetchAnswer } from '../policy/fetch-answer.ts';
import { originListed, ownLoopbackOrigin } from '../policy/origin.ts';
import type { RateLimit } from '../policy/rate-limit.ts';
import { schema as publicSchema } from '../schema/index.ts';
import { printSdl } from '../schema/sdl.ts';
import { bearerAuthorization } from '../upstream/authorization.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { countMessages, keyRefusal, type Refusal } from './admission.ts';
import { type Confirmations, createConfirmations } from './confirm.ts';
import { type CallContext, type GraphQLFetch, headerOf } from './graphql-call.ts';
import {
  clientOfMeta,
  clientOfSession,
  headersOf,
  INTERNAL_ERROR,
  INVALID_REQUEST,
  initializingClient,
  isMcpPath,
  MAX_JSON_DEPTH,
  PARSE_ERROR,
  rpcError,
  SERVER_ERROR,
  sessionIdFor,
} from './http.ts';
import { idOf, refuseInvalidParams } from './messages.ts';
import { operationsAsTools } from './operations-as-tools.ts';
import { createMcpServer } from './server.ts';
import type { ToolSpec } from './tool.ts';
import { builtInTools } from './tools.ts';

export interface McpEndpointOptions {
  /** Yoga's `fetch`: every tool call is a GraphQL request Yoga serves. */
  fetch: GraphQLFetch;
  /**
   * CORS_ORIGINS: a request with an `Origin` it does not name is refused 403 (DNS rebinding); `*`
   * names none here (policy/origin.ts, originListed).
   */
  corsOrigins: readonly string[];
  /** MAX_BODY_BYTES: the bound on one MCP request body. */
  maxBodyBytes: number;
  /**
   * MAX_BATCH_OPERATIONS: the most JSON-RPC messages one request may hold, as a `/graphql` batch
   * may hold operations (MCP's 2025-06-18 revision dropped batches; earlier clients may send them).
   */
  maxBatchMessages: number;
  /** The trusted-documents manifest: its operations become tools; with `require`, the only tools. */
  persistedOperations?: { mode: 'allow' | 'require'; documents: ReadonlyMap<string, string> };
  /**
   * The schema Yoga serves in place of the public one (YogaServerOptions.schema: a test's added
   * mutation): the tools are made from it and it is the schema resource, so they offer what runs.
   * @default the public schema, with FEDERATION=on too: the subgraph's additions are for a router.
   */
  schema?: GraphQLSchema;
  /** INTROSPECTION: off, no schema resource is offered, and no tool points to one. */
  introspection: boolean;
  /** RATE_LIMIT_PER_MINUTE: every JSON-RPC message counts, as each operation does on `/graphql`. */
  rateLimit?: RateLimit;
  /** The keys the upstream accepted: any other is checked before more than `initialize` is served. */
  acceptedKeys?: AcceptedKeys;
  /** The REST client, for that check. */
  upstream: UpstreamClient;
  logger: Logger;
  metrics?: Metrics;
  /** Tracing, when on: a span per tool call (observability/tracing.ts). */
  tracing?: Tracing;
  /** The client's address, for the log line (a trusted proxy's forwarded one). */
  clientAddress: (req: IncomingMessage) => string;
  /**
   * MCP_STATE_SECRET, or the workers' shared secret: signs the state of a write's question to its
   * user (confirm.ts), so that the answer may reach any process sharing it. Unset: this process's own.
   */
  stateSecret?: string;
}

/** The tools a gateway offers: the built-in ones, the manifest's beside them, or the manifest's alone. */
export function toolsFor(
  schema: GraphQLSchema,
  persisted: McpEndpointOptions['persistedOperations'],
  schemaOffered: boolean,
): readonly ToolSpec[] {
  const builtIn = builtInTools(schema, schemaOffered);
  if (!persisted) return builtIn;
  const manifest = operationsAsTools(persisted.documents, schema);
  if (persisted.mode === 'require') return manifest;
  // The operator's trusted document wins over a built-in tool of the same name.
  const taken = new Set(manifest.map((tool) => tool.name));
  return [...manifest, ...builtIn.filter((tool) => !taken.has(tool.name))];
}

const NO_KEY =
  "This MCP endpoint needs your own API key: send the header Authorization: Bearer <API key> (set it in your MCP client's configuration; see docs/mcp.md).";

const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id',
  'access-control-max-age': '600',
};

/** Whether `/mcp` admits a request with this Origin: one CORS_ORIGINS names, none, or a page of its own loopback address. */
function originAdmitted(req: IncomingMessage, corsOrigins: readonly string[]): boolean {
  const origin = req.headers.origin;
  return (
    originListed(corsOrigins, origin) ||
    (origin !== undefined && ownLoopbackOrigin(origin, req.headers.host, req.socket.localAddress))
  );
}

/**
 * The checks of a request's headers: the Origin (DNS rebinding), a browser's preflight (answered
 * here), the key and the method. Returns the caller's `Authorization`, or the refusal, which a
 * POST answers once its body is read, with its request's id. `headers` receives the CORS headers
 * an admitted origin's answer carries.
 */
function admit(
  req: IncomingMessage,
  res: ServerResponse,
  corsOrigins: readonly string[],
  headers: Record<string, string>,
): { authorization: string } | { refused: Refusal } | undefined {
  const origin = req.headers.origin;
  if (!originAdmitted(req, corsOrigins)) {
    const message = `Requests from the origin ${JSON.stringify(origin?.slice(0, 200))} are not allowed here: /mcp admits only origins CORS_ORIGINS lists by name (not *), and a page of its own loopback address.`;
    return { refused: { status: 403, headers: {}, message } };
  }
  if (origin !== undefined) {
    Object.assign(headers, {
      'access-control-allow-origin': origin,
      'access-control-expose-headers': 'mcp-session-id, www-authenticate, x-request-id',
      vary: 'origin',
    });
  }
  if (req.method === 'OPTIONS') {
    res.writeHead(204, { ...headers, ...PREFLIGHT_HEADERS });
    return void res.end();
  }
  const caller = bearerAuthorization(req.headers.authorization);
  if (caller.authorization === undefined) {
    const message = req.headers.authorization === undefined ? NO_KEY : `${caller.problem} ${NO_KEY}`;
    return {
      refused: { status: 401, headers: { 'www-authenticate': 'Bearer realm="pet-gateway"' }, message },
    };
  }
  if (req.method !== 'POST') {
    // Stateless: no stream to open for server messages (GET), no session to end (DELETE).
    const message = 'Method not allowed: this MCP endpoint takes POST only.';
    return { refused: { status: 405, headers: { allow: 'POST' }, message } };
  }
  return { authorization: caller.authorization };
}

/** Why a request is not served, for its one warn line: nothing a stack would explain. */
type NotServed = (reason: string) => void;

/**
 * The body, read and parsed; undefined once answered: its client gone (nobody to answer), or
 * refused as /graphql refuses a body (too large, not JSON, an empty batch or one too long), or
 * nesting deeper than the tool calls' re-encoding can take.
 */
async function bodyOf(
  req: IncomingMessage,
  res: ServerResponse,
  options: McpEndpointOptions,
  headers: Record<string, string>,
  notServed: NotServed,
): Promise<{ body: unknown } | undefined> {
  const read = await readCapped(req, options.maxBodyBytes);
  if ('problem' in read) {
    if (read.problem === 'client gone') return void notServed('the client left before its body ended');
    const tooLarge = `The request body is over ${options.maxBodyBytes} bytes (MAX_BODY_BYTES).`;
    return void rpcError(res, 413, SERVER_ERROR, tooLarge, headers);
  }
  if (nestsDeeperThan(read.text, MAX_JSON_DEPTH)) {
    notServed(`the body nests deeper than ${MAX_JSON_DEPTH} levels`);
    const tooDeep = `Invalid Request: the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`;
    return void rpcError(res, 400, INVALID_REQUEST, tooDeep, headers);
  }
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    return void rpcError(res, 400, PARSE_ERROR, 'Parse error: the body is not JSON.', headers);
  }
  if (Array.isArray(body) && (body.length === 0 || body.length > options.maxBatchMessages)) {
    const problem =
      body.length === 0
        ? 'Invalid Request: an empty batch.'
        : `Invalid Request: a batch holds at most ${options.maxBatchMessages} messages (MAX_BATCH_OPERATIONS); this one holds ${body.length}.`;
    return void rpcError(res, 400, INVALID_REQUEST, problem, headers);
  }
  return { body };
}

/** Answers a request refused whole, with its request's id when its body was read. */
function refuse(
  res: ServerResponse,
  refusal: Refusal,
  headers: Record<string, string>,
  body?: { body: unknown },
): void {
  rpcError(
    res,
    refusal.status,
    refusal.code ?? SERVER_ERROR,
    refusal.message,
    { ...headers, ...refusal.headers },
    refusal.data,
    body === undefined ? null : idOf(body.body),
  );
}

/** What serves the requests of one revision or the other, with the tools and schema every request offers. */
interface Served {
  tools: readonly ToolSpec[];
  schemaText: string | undefined;
  confirmations: Confirmations;
  /** The SDK's handler for 2026-07-28 requests, and the caller of each request it is serving. */
  modern: McpHttpHandler;
  calls: WeakMap<Request, CallContext>;
}

/**
 * The SDK's 2026-07-28 handler: no handshake, `server/discover`, the `Mcp-*` headers and `_meta`
 * checked; a new server for each request, made with its caller.
 */
function servedFor(
  tools: readonly ToolSpec[],
  schemaText: string | undefined,
  confirmations: Confirmations,
): Served {
  const calls = new WeakMap<Request, CallContext>();
  const modern = createMcpHandler(
    (ctx) => {
      const call = ctx.requestInfo && calls.get(ctx.requestInfo);
      if (call === undefined) throw new Error('an MCP request reached the SDK without its caller');
      return createMcpServer(tools, schemaText, call, confirmations);
    },
    // 'auto' answers JSON unless a tool sends something before its result, which none does ('json'
    // would say so on stderr at every start).
    { legacy: 'reject', responseMode: 'auto' },
  );
  return { tools, schemaText, confirmations, modern, calls };
}

/**
 * Serves one admitted request by the revision it speaks: one carrying 2026-07-28's `_meta` envelope
 * through the SDK's handler, any other (2025-11-25 and before) through a new server and transport
 * that live as long as the request does, answered in JSON, as the SDK's stateless example serves it
 * (the SDK's own fallback answers those in SSE, which a client reading JSON cannot parse).
 */
async function answer(
  res: ServerResponse,
  body: unknown,
  call: CallContext,
  served: Served,
  headers: Record<string, string>,
): Promise<void> {
  const request = new Request(`http://gateway${call.req.url}`, {
    method: 'POST',
    headers: headersOf(call.req),
  });
  if (!(await isLegacyRequest(request, body))) {
    served.calls.set(request, call);
    return writeFetchAnswer(res, await served.modern.fetch(request, { parsedBody: body }), headers);
  }
  const server = createMcpServer(served.tools, served.schemaText, call, served.confirmations);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  refuseInvalidParams(transport);
  try {
    await writeFetchAnswer(res, await transport.handleRequest(request, { parsedBody: body }), headers);
  } finally {
    await server.close();
  }
}

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless (a new server and transport
 * per request, as the SDK's stateless example), answering in JSON. Returns a handler that serves
 * `/mcp` and returns true, or returns false for every other path.
 */
export function createMcpEndpoint(
  options: McpEndpointOptions,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const schema = options.schema ?? publicSchema;
  const tools = toolsFor(schema, options.persistedOperations, options.introspection);
  const schemaText = options.introspection ? printSdl(schema) : undefined;
  const served = servedFor(tools, schemaText, createConfirmations(options.stateSecret));
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
    const headers: Record<string, string> = { 'x-request-id': requestId };
    const clientAddress = options.clientAddress(req);
    const notServed: NotServed = (reason) =>
      options.logger.warn({ requestId, clientAddress, reason }, 'mcp request not served');
    const admitted = admit(req, res, options.corsOrigins, headers);
    if (admitted === undefined) return;
    if ('refused' in admitted && req.method !== 'POST') return refuse(res, admitted.refused, headers);
    const parsed = await bodyOf(req, res, options, headers, notServed);
    if (parsed === undefined) return;
    if ('refused' in admitted) return refuse(res, admitted.refused, headers, parsed);
    const { authorization } = admitted;
    const counted = await countMessages(options.rateLimit, req, authorization, parsed.body);
    if ('refused' in counted) return refuse(res, counted.refused, headers, parsed);
    const refusal = await keyRefusal(options, authorization, parsed.body, (name) => headerOf(req, name));
    if (refusal) return refuse(res, refusal, headers, parsed);
    const init = initializingClient(parsed.body);
    if (init) headers['mcp-session-id'] = sessionIdFor(init.name);
    const call: CallContext = {
      fetch: options.fetch,
      req,
      authorization,
      requestId,
      clientAddress,
      clientName: init
        ? init.name
        : (clientOfMeta(parsed.body) ?? clientOfSession(req.headers['mcp-session-id'])),
      logger: options.logger,
      metrics: options.metrics,
      tracing: options.tracing,
      counted: counted.calls,
    };
    await answer(res, parsed.body, call, served, headers);
  };
  return (req, res) => {
    if (!isMcpPath(req.url)) return false;
    serve(req, res).catch((error: unknown) => {
      options.logger.error({ err: error }, 'mcp request failed');
      if (!res.headersSent) rpcError(res, 500, INTERNAL_ERROR, 'Internal error: see the gateway log.');
      else res.destroy();
    });
    return true;
  };
}
