import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { CODES } from '../codes.ts';
import { DEFAULT_LIMITS } from '../config.ts';
import { createFastLane } from '../fast-lane/fast-lane.ts';
import { INTERNAL_ERROR, isMcpPath, rpcError } from '../mcp/http.ts';
import { createLogger } from '../observability/logging.ts';
import type { AcceptedKeys } from '../policy/accepted-keys.ts';
import { maxAgeSeconds } from '../policy/cache-headers.ts';
import { deprecatedUseReporter } from '../policy/deprecation-headers.ts';
import { refuse } from '../policy/error-body.ts';
import { createLanes, type Lanes } from '../policy/prepared-operations.ts';
import { contextDepsOf } from '../schema/context.ts';
import { createYogaServer, type YogaServer, type YogaServerOptions } from '../yoga/server.ts';
import { createHealthEndpoints } from './health.ts';
import { signpost, unknownPath } from './signposts.ts';

export interface EdgeOptions extends YogaServerOptions {
  /**
   * Serve operations Yoga has prepared without Yoga (src/fast-lane/fast-lane.ts); off, every request
   * goes through Yoga. @default true
   */
  fastLane?: boolean;
  /**
   * In the fast lane, compile prepared operations into plans of upstream calls where every field
   * allows it (src/execution/plan.ts); off, the fast lane runs compiled execution only. @default true
   */
  plans?: boolean;
  /** True once the process is shutting down (`/readiness` answers 503). */
  draining?: () => boolean;
  /** The long-lived streams held now, for `/health` and `/readiness`. */
  streams?: () => { subscriptions: number; webSockets: number };
  /**
   * Serve the Model Context Protocol at `/mcp` (src/mcp/): tools for assistants, each call a
   * GraphQL request through Yoga; off, `/mcp` answers as any unknown path. @default true
   */
  mcp?: boolean;
  /**
   * The keys the upstream accepted (fed by the upstream client's observers): `/mcp` checks any
   * other before it serves more than `initialize`; without it, every time.
   */
  acceptedKeys?: AcceptedKeys;
  /** Signs the state of a write tool's question on `/mcp` (mcp/confirm.ts); unset, the process's own. */
  mcpStateSecret?: string;
}

export interface Edge {
  /** Yoga, the server of record. */
  yoga: YogaServer;
  /** Where every HTTP request enters; decides which lane serves it. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** What the edge knows: prepared operations and requests served per lane; undefined when off. */
  lanes?: Lanes;
}

const peerAddress = (req: IncomingMessage) => req.socket.remoteAddress ?? '';

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * A room loaded on its first request (`/mcp`, `/rest/`): its modules (the MCP SDK, zod's JSON
 * Schema) cost nothing to the start of a gateway nobody asks of it. The request's body waits,
 * unread, meanwhile; a failure to load answers 500 as the room would (`failed`) and logs once.
 */
function onFirstUse(
  serves: (url: string | undefined) => boolean,
  load: () => Promise<Handler>,
  failed: (res: ServerResponse) => void,
  logger: Logger,
): Handler {
  let room: Promise<Handler> | undefined;
  return (req, res) => {
    if (!serves(req.url)) return false;
    room ??= load();
    room.then(
      (handle) => handle(req, res),
      (error: unknown) => {
        logger.error({ err: error }, 'a room of the gateway failed to load');
        failed(res);
      },
    );
    return true;
  };
}

/** `/mcp` in front of Yoga, when on: its tool calls are GraphQL requests Yoga serves. */
function mcpRoute(options: EdgeOptions, yoga: YogaServer, logger: Logger): Handler {
  if (options.mcp === false) return () => false;
  const limits = options.limits ?? DEFAULT_LIMITS;
  return onFirstUse(
    isMcpPath,
    async () =>
      (await import('../mcp/endpoint.ts')).createMcpEndpoint({
        fetch: (url, init, context) => Promise.resolve(yoga.fetch(url, init, context)),
        corsOrigins: options.corsOrigins ?? ['*'],
        maxBodyBytes: limits.maxBodyBytes,
        maxBatchMessages: limits.maxBatchOperations,
        ...(options.persistedOperations ? { persistedOperations: options.persistedOperations } : {}),
        ...(options.schema ? { schema: options.schema } : {}),
        introspection: options.introspection ?? true,
        ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
        ...(options.acceptedKeys ? { acceptedKeys: options.acceptedKeys } : {}),
        upstream: options.upstream,
        logger,
        ...(options.metrics ? { metrics: options.metrics } : {}),
        ...(options.tracing ? { tracing: options.tracing } : {}),
        clientAddress: options.clientAddress ?? peerAddress,
        ...(options.mcpStateSecret ? { stateSecret: options.mcpStateSecret } : {}),
      }),
    (res) => rpcError(res, 500, INTERNAL_ERROR, 'Internal error: see the gateway log.'),
    logger,
  );
}

/** `/rest/`, with a trusted-documents manifest: its operations as REST endpoints Yoga serves. */
function restRoute(options: EdgeOptions, yoga: YogaServer, logger: Logger): Handler {
  const documents = options.persistedOperations?.documents;
  if (documents === undefined) return () => false;
  return onFirstUse(
    (url) => url?.startsWith('/rest/') === true,
    async () =>
      (await import('../rest/endpoint.ts')).createRestEndpoint({
        fetch: (url, init, context) => Promise.resolve(yoga.fetch(url, init, context)),
        documents,
        ...(options.schema ? { schema: options.schema } : {}),
        maxBodyBytes: (options.limits ?? DEFAULT_LIMITS).maxBodyBytes,
        logger,
      }),
    (res) => refuse(res, CODES.INTERNAL_SERVER_ERROR, 'Internal error: see the gateway log.'),
    logger,
  );
}

/**
 * The gateway behind node:http: Yoga, and in front of it (unless switched off) the fast lane for
 * prepared operations.
 */
export function createEdge(options: EdgeOptions): Edge {
  const {
    fastLane: fastLaneOn = true,
    plans = true,
    draining,
    mcp: _mcp,
    acceptedKeys: _keys,
    ...gatewayOptions
  } = options;
  const logger = options.logger ?? createLogger('info');
  const resolved: YogaServerOptions = { ...gatewayOptions, logger };
  const health = createHealthEndpoints({
    upstream: options.upstream,
    ...(options.redis ? { redis: options.redis } : {}),
    ...(draining ? { draining } : {}),
    ...(options.streams ? { streams: options.streams } : {}),
  });
  // Yoga serves /graphql, and /metrics when metrics are on; /mcp and /rest/ are answered before.
  const notServed = unknownPath(new Set(['/graphql', ...(options.metrics ? ['/metrics'] : [])]));
  // What is answered before a lane, in this order, whichever lane serves the rest.
  const before = (yoga: YogaServer): Handler => {
    const mcp = mcpRoute(options, yoga, logger);
    const rest = restRoute(options, yoga, logger);
    return (req, res) =>
      health(req, res) || signpost(req, res) || mcp(req, res) || rest(req, res) || notServed(req, res);
  };
  if (!fastLaneOn) {
    const yoga = createYogaServer(resolved);
    const answered = before(yoga);
    return { yoga, handle: (req, res) => void (answered(req, res) || yoga(req, res)) };
  }
  // With trusted documents required only the manifest's ids run: no text may stand for one by shape.
  const lanes = createLanes(plans, undefined, options.persistedOperations?.mode !== 'require');
  const yoga = createYogaServer(resolved, lanes);
  const fast = createFastLane({
    lanes,
    yoga,
    context: contextDepsOf(resolved),
    maxBodyBytes: (options.limits ?? DEFAULT_LIMITS).maxBodyBytes,
    maxBatchOperations: (options.limits ?? DEFAULT_LIMITS).maxBatchOperations,
    logger,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
    ...(options.costBudget ? { costBudget: options.costBudget } : {}),
    clientAddress: options.clientAddress ?? peerAddress,
    cacheMaxAgeSeconds: maxAgeSeconds(options.cache?.ttlMs),
    onDeprecatedUse: deprecatedUseReporter(logger, options.metrics),
  });
  options.metrics?.watchLanes(lanes.served);
  const answered = before(yoga);
  const handle = (req: IncomingMessage, res: ServerResponse) => void (answered(req, res) || fast(req, res));
  return { yoga, handle, lanes };
}
