import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Limits } from '../../src/config.ts';
import { createEdge, type EdgeOptions } from '../../src/http/edge.ts';
import { createHttpServer, type HttpServerOptions } from '../../src/http/listener.ts';
import type { Lanes } from '../../src/http/prepared-operations.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { createUpstreamClient, type UpstreamClientOptions } from '../../src/upstream/client.ts';
import type { ResponseCacheOptions } from '../../src/upstream/loaders.ts';

export interface RunningGateway {
  /** The GraphQL endpoint, e.g. http://127.0.0.1:1234/graphql */
  url: string;
  origin: string;
  /** What the edge knows (prepared operations, requests served per lane); undefined with FAST_LANE off. */
  lanes: Lanes | undefined;
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
  /** Any other createGateway option (clock, logger, metrics, tracing, persisted documents…). */
  gateway?: Omit<Partial<EdgeOptions>, 'upstream' | 'limits' | 'cache'>;
  /** The listener's connection cap, timeouts and close callback. */
  server?: HttpServerOptions;
  /** Sees every request as it arrives, before the edge: what a caller (or a router) really sent. */
  onRequest?: (req: IncomingMessage) => void;
}

/** Starts the real gateway on a free loopback port, talking to `upstreamUrl`, as `main.ts` wires it. */
export async function startGateway(options: GatewayTestOptions): Promise<RunningGateway> {
  const upstream = createUpstreamClient({
    baseUrl: new URL(options.upstreamUrl),
    timeoutMs: options.timeoutMs ?? 2000,
    connections: 16,
    ...options.client,
    // The rate limit learns from the upstream which keys it accepts, as main.ts wires it.
    ...(options.gateway?.rateLimit
      ? { observers: [...(options.client?.observers ?? []), options.gateway.rateLimit.observer] }
      : {}),
  });
  const edge = createEdge({
    upstream,
    // Tests read logs where they check them; elsewhere they would only bury the test output.
    logger: createLogger('silent'),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.cache ? { cache: options.cache } : {}),
    ...options.gateway,
  });
  const { onRequest } = options;
  const server = createHttpServer(
    onRequest
      ? (req, res) => {
          onRequest(req);
          edge.handle(req, res);
        }
      : edge.handle,
    options.server,
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/graphql`,
    origin,
    lanes: edge.lanes,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await upstream.close();
    },
  };
}
