import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Config, type Limits, loadConfig } from '../../src/config.ts';
import type { HttpServerOptions } from '../../src/edge/listener.ts';
import type { EdgeOptions } from '../../src/edge/route.ts';
import { composeGateway } from '../../src/gateway.ts';
import type { Watches } from '../../src/live/watches.ts';
import { createLogger } from '../../src/observability/logging.ts';
import type { Metrics } from '../../src/observability/metrics.ts';
import type { Lanes } from '../../src/policy/prepared-operations.ts';
import type { ResponseCacheOptions } from '../../src/upstream/cached-calls.ts';
import type { UpstreamClientOptions } from '../../src/upstream/client.ts';

export interface RunningGateway {
  /** The GraphQL endpoint, e.g. http://127.0.0.1:1234/graphql */
  url: string;
  origin: string;
  /** What the edge knows (prepared operations, requests served per lane); undefined with FAST_LANE off. */
  lanes: Lanes | undefined;
  /** Live subscriptions; undefined with `config: { live: undefined }`. */
  live: Watches | undefined;
  close(): Promise<void>;
}

export interface GatewayTestOptions {
  upstreamUrl: string;
  /** @default 2000 */
  timeoutMs?: number;
  limits?: Limits;
  /** Overrides of the upstream client's retry and breaker settings. */
  client?: Partial<UpstreamClientOptions>;
  /** A response cache; the caller owns the store and closes it. */
  cache?: ResponseCacheOptions;
  /** Any other createYogaServer option (clock, logger, metrics, tracing, persisted documents…). */
  gateway?: Omit<Partial<EdgeOptions>, 'upstream' | 'limits' | 'cache'>;
  /** The listener's connection cap, timeouts and close callback. */
  server?: HttpServerOptions;
  /** Settings as `loadConfig` would read them from the environment (e.g. `live`). */
  config?: Partial<Config>;
  /**
   * Metrics as main.ts hands them to the gateway: it counts into them itself (connections closed,
   * live lists, the rate limit). Pass them here or in `gateway`, not both.
   */
  metrics?: Metrics;
  /** Sees every request as it arrives, before the edge: what a caller (or a router) really sent. */
  onRequest?: (req: IncomingMessage) => void;
}

/**
 * Starts the real gateway on a free loopback port, talking to `upstreamUrl`: composed by
 * composeGateway, as `main.ts` composes it, from the default configuration (no environment read)
 * with a shorter deadline and a smaller pool, and whatever the test overrides.
 */
export async function startGateway(options: GatewayTestOptions): Promise<RunningGateway> {
  const config: Config = {
    ...loadConfig({}),
    upstreamTimeoutMs: options.timeoutMs ?? 2000,
    upstreamConnections: 16,
    maxConnections: 1024,
    maxConnectionsPerAddress: 256,
    // APQ only where a test brings its store (`gateway.automaticPersistedQueries`).
    apq: undefined,
    ...(options.limits ? { limits: options.limits } : {}),
    ...options.config,
  };
  const { onRequest } = options;
  const { edge, server, close, live, endStreams } = composeGateway(config, {
    upstreamUrl: new URL(options.upstreamUrl),
    // Tests read logs where they check them; elsewhere they would only bury the test output.
    logger: options.gateway?.logger ?? createLogger('silent'),
    // What the gateway counts where main.ts counts it (connections closed, live lists), when a test reads it.
    ...(options.metrics ? { metrics: options.metrics } : {}),
    overrides: {
      ...(options.client ? { client: options.client } : {}),
      edge: { ...(options.cache ? { cache: options.cache } : {}), ...options.gateway },
      ...(options.server ? { server: options.server } : {}),
    },
  });
  // Before the listener's own handler: it sees what a caller (or a router) really sent.
  if (onRequest) server.prependListener('request', onRequest);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/graphql`,
    origin,
    lanes: edge.lanes,
    live,
    close: async () => {
      // Subscriptions and WebSockets first: an upgraded socket is not one closeAllConnections sees.
      await endStreams();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await close();
    },
  };
}
