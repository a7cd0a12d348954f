import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { createClientAddresses } from './edge/client-address.ts';
import { createHttpServer, type HttpServer, type HttpServerOptions } from './edge/listener.ts';
import { createEdge, type Edge, type EdgeOptions } from './edge/route.ts';
import { createWebSockets } from './edge/websocket.ts';
import { createWatches, type Watches } from './live/watches.ts';
import type { Metrics } from './observability/metrics.ts';
import type { Tracing } from './observability/tracing.ts';
import { createUpstreamLog } from './observability/upstream-log.ts';
import { type AcceptedKeys, createAcceptedKeys } from './policy/accepted-keys.ts';
import { createCostBudget } from './policy/cost-budget.ts';
import { originMayConnect } from './policy/origin.ts';
import { createRateLimit, type RateLimit } from './policy/rate-limit.ts';
import { createClusterAnnouncements } from './stores/cluster-announcements.ts';
import { createRedisAnnouncements } from './stores/live-announcements.ts';
import { createSharedRedis, type RedisHealth, type RedisState, type SharedRedis } from './stores/redis.ts';
import {
  createMemoryDocumentStore,
  createRedisDocumentStore,
  type DocumentStore,
} from './stores/registered-documents.ts';
import { createMemoryCache, createRedisCache, type ResponseCache } from './stores/response-cache.ts';
import { type CallerKey, createCallerKey } from './upstream/caller-key.ts';
import { createUpstreamClient, type UpstreamClient, type UpstreamClientOptions } from './upstream/client.ts';
import type { YogaServerOptions } from './yoga/server.ts';

/** What the process brings besides the configuration: where the upstream is, and where logs, metrics and spans go. */
export interface GatewayParts {
  /** The upstream's `/v1` URL: `config.upstreamUrl`, or the embedded reference service's. */
  upstreamUrl: URL;
  logger: Logger;
  metrics?: Metrics;
  tracing?: Tracing;
  persistedOperations?: YogaServerOptions['persistedOperations'];
  /**
   * A worker's (WORKERS > 1): the secret its primary made for this run, so every worker names a
   * caller alike and the counts the primary keeps for them meet (stores/cluster-counts.ts).
   */
  workersSecret?: string;
  /** Prefilled in GraphiQL (the embedded service's key, made for this run). */
  graphiqlAuthorization?: string;
  /** True once the process is shutting down. */
  draining?: () => boolean;
  onRedisState?: (state: RedisState, error?: Error) => void;
  /** Also sees the connections the listener closed (the metric is counted here). */
  onConnectionClose?: HttpServerOptions['onClose'];
  /**
   * Replaces what the configuration cannot say: injected clocks, retry and breaker settings, a
   * store the caller owns. The tests use these; `main.ts` passes none.
   */
  overrides?: {
    client?: Partial<UpstreamClientOptions>;
    edge?: Partial<EdgeOptions>;
    server?: HttpServerOptions;
  };
}

export interface ComposedGateway {
  edge: Edge;
  /** node:http, not yet listening. */
  server: HttpServer;
  upstream: UpstreamClient;
  /** Live lists (subscriptions); undefined with LIVE=off. */
  live: Watches | undefined;
  /**
   * Ends every subscription at once and closes every WebSocket (going away): idle ones at once,
   * those running an operation once it is done, within `graceMs` (the drain's window). Once only.
   */
  endStreams(graceMs?: number): Promise<void>;
  /** Closes what the gateway opened (upstream pool, stores, Redis); the server is drained first by the caller. */
  close(): Promise<void>;
}

/** The response cache RESPONSE_CACHE names; undefined when off (or Redis is not configured). */
function responseCacheOf(config: Config, redis: SharedRedis | undefined): ResponseCache | undefined {
  if (config.responseCache === 'redis') return redis ? createRedisCache(redis) : undefined;
  return config.responseCache === 'memory'
    ? createMemoryCache({ maxBytes: config.responseCacheMaxBytes })
    : undefined;
}

/** Where APQ's registered documents live; undefined when APQ is off. */
function apqStoreOf(config: Config, redis: SharedRedis | undefined): DocumentStore | undefined {
  if (!config.apq) return undefined;
  const bounds = { maxDocuments: config.apq.maxDocuments, maxBytes: config.apq.maxBytes };
  return config.apq.store === 'redis' && redis
    ? createRedisDocumentStore(redis, bounds)
    : createMemoryDocumentStore(bounds);
}

/** What `/health` and `/readiness` say of the shared Redis: its state, and what waits on it. */
function redisHealth(config: Config, redis: SharedRedis): RedisHealth {
  return {
    get state() {
      return redis.state;
    },
    uses: [
      ...(config.responseCache === 'redis' ? ['response cache'] : []),
      ...(config.rateLimit?.store === 'redis' ? ['rate limit (per instance meanwhile)'] : []),
      ...(config.apq?.store === 'redis' ? ['APQ store (hashes answered as not found meanwhile)'] : []),
    ],
  };
}

/** The REST client, with every observer of its calls: the log, metrics, traces, the keys it accepts, the rate limit. */
function upstreamClientOf(
  config: Config,
  parts: GatewayParts,
  acceptedKeys: AcceptedKeys,
  rateLimit: RateLimit | undefined,
): UpstreamClient {
  const { logger, metrics, tracing, overrides = {} } = parts;
  return createUpstreamClient({
    baseUrl: parts.upstreamUrl,
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    coalesce: config.upstreamCoalesce,
    ...overrides.client,
    // The rate limit and /mcp learn from the upstream which keys it accepts.
    observers: [
      createUpstreamLog(logger),
      metrics?.upstream,
      tracing?.upstream,
      acceptedKeys.observer,
      rateLimit?.observer,
      ...(overrides.client?.observers ?? []),
    ].filter((observer) => observer !== undefined),
  });
}

/** The one Redis the configuration's stores share, with its state watched; undefined when none uses it. */
function sharedRedisOf(config: Config, parts: GatewayParts): SharedRedis | undefined {
  const usesRedis =
    config.responseCache === 'redis' ||
    config.rateLimit?.store === 'redis' ||
    config.apq?.store === 'redis' ||
    config.live?.store === 'redis';
  if (!usesRedis || !config.redisUrl) return undefined;
  const redis = createSharedRedis(
    config.redisUrl,
    parts.onRedisState ? { onStateChange: parts.onRedisState } : {},
  );
  parts.metrics?.watchRedis(redis);
  return redis;
}

/**
 * The long-lived streams: WebSockets on /graphql's upgrade, and how every stream ends on the drain:
 * each subscription completes first (SSE `complete`, graphql-ws `complete`), then the sockets close
 * as going away, so clients reconnect to another instance.
 */
function streamsOf(
  config: Config,
  edge: Edge,
  live: Watches | undefined,
  parts: { logger: Logger; onClose: HttpServerOptions['onClose'] },
) {
  const webSockets = createWebSockets({
    yoga: (request, serverContext) => edge.yoga.fetch(request, serverContext),
    maxPayloadBytes: config.limits.maxBodyBytes,
    originAllowed: (origin) => originMayConnect(config.corsOrigins, origin),
    bounds: config.webSocket,
    logger: parts.logger,
    ...(parts.onClose ? { onClose: parts.onClose } : {}),
  });
  // Called by the drain and again by close(): the streams end once.
  let ending: Promise<void> | undefined;
  const endStreams = (graceMs?: number) => {
    ending ??= (async () => {
      await live?.close();
      await webSockets.close(graceMs);
    })();
    return ending;
  };
  return { webSockets, endStreams };
}

/**
 * Where a create is told to the lists of other processes: every instance sharing the Redis
 * (LIVE_STORE=redis), else this instance's other workers (WORKERS > 1), else nobody.
 */
function announcementsOf(config: Config, redis: SharedRedis | undefined) {
  if (config.live?.store === 'redis' && redis) return { announcements: createRedisAnnouncements(redis) };
  if (config.workers > 1 && cluster.isWorker) return { announcements: createClusterAnnouncements() };
  return {};
}

/**
 * The live lists LIVE asks for: polled through the upstream client, creates announced through the
 * shared Redis with LIVE_STORE=redis, a log line per subscription that ends, counted in /metrics.
 */
function liveListsOf(
  config: Config,
  parts: {
    upstream: UpstreamClient;
    callerKey: CallerKey;
    redis: SharedRedis | undefined;
    logger: Logger;
    metrics: Metrics | undefined;
    onConnectionClose: HttpServerOptions['onClose'];
  },
): Watches | undefined {
  if (!config.live) return undefined;
  const { logger } = parts;
  const live = createWatches({
    upstream: parts.upstream,
    callerKey: parts.callerKey,
    pollMs: config.live.pollMs,
    maxPerKey: config.live.maxPerKey,
    maxStreams: config.live.maxStreams,
    slowReaderMs: config.live.slowReaderMs,
    ...announcementsOf(config, parts.redis),
    onEnd: ({ label, durationMs, events, reason }) => {
      const line = { ...label, durationMs, events, reason };
      if (reason !== 'slow_reader') return logger.info(line, 'subscription ended');
      logger.warn(line, 'subscription ended: its client stopped reading');
      parts.onConnectionClose?.('slow_reader');
    },
  });
  parts.metrics?.watchLive(live.stats);
  return live;
}

/** Counts each connection the listener closes itself, and tells the process's log line. */
function connectionCloseObserver(
  metrics: Metrics | undefined,
  onConnectionClose: HttpServerOptions['onClose'],
): HttpServerOptions['onClose'] {
  if (!metrics && !onConnectionClose) return undefined;
  return (reason) => {
    metrics?.connectionClosed(reason);
    onConnectionClose?.(reason);
  };
}

/**
 * The gateway as one configuration makes it: the shared Redis (one connection and one breaker for
 * the cache, the limit and the APQ store), the stores, the rate limit, the upstream client and its
 * observers, the edge and its HTTP server. `main.ts`, the bench and the tests build it here, so
 * none of them wires it differently.
 */
export function composeGateway(config: Config, parts: GatewayParts): ComposedGateway {
  const { logger, metrics, tracing, overrides = {} } = parts;
  const redis = sharedRedisOf(config, parts);
  // Without a secret (no caller's key goes to Redis): this process's own.
  const callerKey = createCallerKey(config.redisKeySecret ?? parts.workersSecret);
  // The workers of one start share theirs: a write's question may be answered on any of them.
  const mcpStateSecret = config.mcpStateSecret ?? parts.workersSecret;
  const cacheStore = responseCacheOf(config, redis);
  if (cacheStore && metrics) metrics.watchCache(cacheStore.stats);
  const clientAddresses = createClientAddresses(config.trustedProxies);
  // Without a rate limit only /mcp reads the memory: it need not hash the key of every answer.
  const acceptedKeys = createAcceptedKeys({
    fromEveryAnswer: config.rateLimit !== undefined || overrides.edge?.rateLimit !== undefined,
  });
  const ownRateLimit =
    config.rateLimit &&
    createRateLimit({
      ...config.rateLimit,
      clientAddress: clientAddresses.of,
      callerKey,
      acceptedKeys,
      acrossWorkers: config.workers > 1,
      ...(redis ? { redis } : {}),
    });
  const rateLimit = overrides.edge?.rateLimit ?? ownRateLimit;
  if (rateLimit && metrics) metrics.watchRateLimit(rateLimit.stats);
  const costBudget =
    config.costBudget &&
    createCostBudget({
      ...config.costBudget,
      clientAddress: clientAddresses.of,
      callerKey,
      acrossWorkers: config.workers > 1,
      ...(redis ? { redis } : {}),
    });
  const upstream = upstreamClientOf(config, parts, acceptedKeys, rateLimit);
  const apqStore = apqStoreOf(config, redis);
  if (apqStore && metrics) metrics.watchDocumentStore(apqStore.stats);
  const onClose = connectionCloseObserver(metrics, parts.onConnectionClose);
  const live = liveListsOf(config, {
    upstream,
    callerKey,
    redis,
    logger,
    metrics,
    onConnectionClose: onClose,
  });
  let sockets: { readonly open: number } | undefined;
  const edge = createEdge({
    ...(parts.draining ? { draining: parts.draining } : {}),
    // The WebSockets are made once the edge exists (they relay to its Yoga): read when asked.
    streams: () => ({ subscriptions: live?.stats.open ?? 0, webSockets: sockets?.open ?? 0 }),
    fastLane: config.fastLane,
    plans: config.plans,
    mcp: config.mcp,
    ...(mcpStateSecret ? { mcpStateSecret } : {}),
    federation: config.federation,
    upstream,
    ...(cacheStore ? { cache: { store: cacheStore, ttlMs: config.responseCacheTtlMs, callerKey } } : {}),
    ...(rateLimit ? { rateLimit } : {}),
    ...(costBudget ? { costBudget } : {}),
    acceptedKeys,
    clientAddress: clientAddresses.of,
    ...(redis ? { redis: redisHealth(config, redis) } : {}),
    logger,
    ...(metrics ? { metrics } : {}),
    ...(tracing ? { tracing } : {}),
    limits: config.limits,
    corsOrigins: config.corsOrigins,
    graphiql: config.graphiql,
    introspection: config.introspection,
    ...(parts.persistedOperations ? { persistedOperations: parts.persistedOperations } : {}),
    ...(apqStore ? { automaticPersistedQueries: apqStore } : {}),
    ...(live ? { live } : {}),
    ...(parts.graphiqlAuthorization ? { graphiqlAuthorization: parts.graphiqlAuthorization } : {}),
    ...overrides.edge,
  });
  const server = createHttpServer(edge.handle, {
    maxConnections: config.maxConnections,
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    isProxy: clientAddresses.isProxy,
    ...(onClose ? { onClose } : {}),
    ...overrides.server,
  });
  const { webSockets, endStreams } = streamsOf(config, edge, live, { logger, onClose });
  sockets = webSockets;
  server.serveUpgrades(webSockets.upgrade);
  return {
    edge,
    server,
    upstream,
    live,
    endStreams,
    close: async () => {
      await endStreams();
      await upstream.close();
      await cacheStore?.close();
      await ownRateLimit?.close();
      await costBudget?.close();
      await apqStore?.close();
      await redis?.close();
    },
  };
}
