import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, loadConfig } from './config.ts';
import { createEdge } from './http/edge.ts';
import { createHttpServer } from './http/listener.ts';
import { loadPersistedDocuments } from './http/persisted-documents.ts';
import { createRateLimit } from './http/rate-limit.ts';
import { createLogger } from './observability/logging.ts';
import { createMetrics } from './observability/metrics.ts';
import type { GatewayOptions } from './server.ts';
import { listen, petstoreDbError, StartupError } from './startup-errors.ts';
import { createMemoryCache, createRedisCache } from './upstream/cache.ts';
import { createUpstreamClient } from './upstream/client.ts';

/** How long SIGTERM waits for in-flight operations before closing anyway. */
const DRAIN_TIMEOUT_MS = 10_000;

/** Ends start-up with the error's one line, as a bad configuration value does. */
function exit(error: unknown): never {
  if (!(error instanceof StartupError)) throw error;
  console.error(`pet-gateway: ${error.message}`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`pet-gateway: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }

  let persistedOperations: GatewayOptions['persistedOperations'];
  if (config.persistedOperations !== 'off' && config.persistedOperationsFile) {
    try {
      persistedOperations = {
        mode: config.persistedOperations,
        documents: loadPersistedDocuments(config.persistedOperationsFile),
      };
    } catch (error) {
      console.error(`pet-gateway: PERSISTED_OPERATIONS_FILE: ${(error as Error).message}`);
      process.exit(1);
    }
  }

  let upstreamUrl = config.upstreamUrl;
  let embeddedKey: string | undefined;
  let closeEmbedded = async () => {};
  if (upstreamUrl === undefined) {
    // No upstream configured: run the reference service beside the gateway so `npm start` works
    // out of the box. A key made for this process is printed and prefilled in GraphiQL.
    const { startPetstore } = await import('./petstore/server.ts');
    embeddedKey = config.petstoreApiKey ?? `dev-${randomBytes(18).toString('base64url')}`;
    let petstore: Awaited<ReturnType<typeof startPetstore>>;
    try {
      if (config.petstoreDb !== ':memory:') mkdirSync(dirname(config.petstoreDb), { recursive: true });
      petstore = await startPetstore({ dbPath: config.petstoreDb, apiKey: embeddedKey, port: 0 });
    } catch (error) {
      exit(petstoreDbError(config.petstoreDb, error));
    }
    upstreamUrl = new URL(petstore.url);
    closeEmbedded = () => petstore.close();
  }

  const logger = createLogger(config.logLevel);
  const metrics = config.metrics ? createMetrics() : undefined;
  // Loaded only when configured: the OpenTelemetry SDK and exporter add ~40 MB of RSS at start.
  const tracing = config.otlpEndpoint
    ? (await import('./observability/tracing.ts')).createTracing({ exporter: config.otlpEndpoint })
    : undefined;
  const upstream = createUpstreamClient({
    baseUrl: upstreamUrl,
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    coalesce: config.upstreamCoalesce,
    observers: [metrics?.upstream, tracing?.upstream].filter((observer) => observer !== undefined),
  });
  const cacheStore =
    config.responseCache === 'redis' && config.redisUrl
      ? createRedisCache(config.redisUrl, {
          onError: (error) =>
            logger.warn({ error: error.message }, 'response cache unavailable, serving from upstream'),
        })
      : config.responseCache === 'memory'
        ? createMemoryCache()
        : undefined;
  if (cacheStore && metrics) metrics.watchCache(cacheStore.stats);
  const rateLimit = config.rateLimit
    ? createRateLimit({
        perMinute: config.rateLimit.perMinute,
        store: config.rateLimit.store,
        ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
        onError: (error) =>
          logger.warn({ error: error.message }, 'rate limit store unavailable, limiting per instance'),
      })
    : undefined;
  if (rateLimit && metrics) metrics.watchRateLimit(rateLimit.stats);
  const edge = createEdge({
    fastLane: config.fastLane,
    federation: config.federation,
    upstream,
    ...(cacheStore ? { cache: { store: cacheStore, ttlMs: config.responseCacheTtlMs } } : {}),
    ...(rateLimit ? { rateLimit } : {}),
    logger,
    ...(metrics ? { metrics } : {}),
    ...(tracing ? { tracing } : {}),
    limits: config.limits,
    corsOrigins: config.corsOrigins,
    graphiql: config.graphiql,
    introspection: config.introspection,
    ...(persistedOperations ? { persistedOperations } : {}),
    ...(embeddedKey ? { graphiqlAuthorization: `Bearer ${embeddedKey}` } : {}),
  });
  const server = createHttpServer(edge.handle);

  await listen(server, config.port, config.host).catch(exit);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const served = config.graphiql ? 'GraphQL and GraphiQL' : 'GraphQL';
  console.log(`pet-gateway: ${served} at http://${shownHost}:${port}/graphql`);
  if (embeddedKey) {
    console.log(`pet-gateway: no UPSTREAM_URL, serving the reference animal store at ${upstreamUrl.href}`);
    if (!config.petstoreApiKey) console.log(`pet-gateway: API key for this run: ${embeddedKey}`);
  } else {
    console.log(`pet-gateway: upstream ${upstreamUrl.origin}`);
  }
  if (config.rateLimit) {
    const where =
      config.rateLimit.store === 'redis' && config.redisUrl ? `Redis at ${config.redisUrl.host}` : 'memory';
    console.log(
      `pet-gateway: rate limit ${config.rateLimit.perMinute} requests per API key per minute (${where})`,
    );
  }
  if (cacheStore) {
    const where = config.redisUrl ? ` at ${config.redisUrl.host}` : '';
    console.log(
      `pet-gateway: response cache ${config.responseCache}${where}, ${config.responseCacheTtlMs} ms`,
    );
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`pet-gateway: ${signal}, finishing in-flight requests`);
    const forced = setTimeout(() => {
      console.error('pet-gateway: drain timeout, closing remaining connections');
      server.closeAllConnections();
    }, DRAIN_TIMEOUT_MS);
    forced.unref();
    // Stop accepting; idle keep-alive sockets close now, busy ones once their response is sent.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await closed;
    await upstream.close();
    await cacheStore?.close();
    await rateLimit?.close();
    await closeEmbedded();
    await tracing?.shutdown();
    logger.flush();
    clearTimeout(forced);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

await main();
