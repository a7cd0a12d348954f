import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_LIMITS } from '../config.ts';
import { createLogger } from '../observability/logging.ts';
import { createLanes, type Lanes } from '../yoga/prepared-operations.ts';
import { maxAgeSeconds } from '../yoga/response/cache-headers.ts';
import {
  contextDeps,
  createGateway,
  deprecatedUseReporter,
  type Gateway,
  type GatewayOptions,
} from '../yoga/server.ts';
import { createFastLane } from './fast-lane.ts';
import { createHealthEndpoints } from './health.ts';

export interface EdgeOptions extends GatewayOptions {
  /**
   * Serve operations Yoga has prepared without Yoga (src/edge/fast-lane.ts); off, every request
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
}

export interface Edge {
  /** Yoga, the server of record. */
  yoga: Gateway;
  /** Where every HTTP request enters; decides which lane serves it. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** What the edge knows: prepared operations and requests served per lane; undefined when off. */
  lanes?: Lanes;
}

/**
 * The gateway behind node:http: Yoga, and in front of it (unless switched off) the fast lane for
 * prepared operations.
 */
const peerAddress = (req: IncomingMessage) => req.socket.remoteAddress ?? '';

export function createEdge(options: EdgeOptions): Edge {
  const { fastLane = true, plans = true, draining, ...gatewayOptions } = options;
  const logger = options.logger ?? createLogger('info');
  const resolved: GatewayOptions = { ...gatewayOptions, logger };
  const health = createHealthEndpoints({
    upstream: options.upstream,
    ...(options.redis ? { redis: options.redis } : {}),
    ...(draining ? { draining } : {}),
  });
  if (!fastLane) {
    const yoga = createGateway(resolved);
    return { yoga, handle: (req, res) => void (health(req, res) || yoga(req, res)) };
  }
  const lanes = createLanes(plans);
  const yoga = createGateway(resolved, lanes);
  const fast = createFastLane({
    lanes,
    yoga,
    context: contextDeps(resolved),
    maxBodyBytes: (options.limits ?? DEFAULT_LIMITS).maxBodyBytes,
    logger,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
    clientAddress: options.clientAddress ?? peerAddress,
    cacheMaxAgeSeconds: maxAgeSeconds(options.cache?.ttlMs),
    onDeprecatedUse: deprecatedUseReporter(logger, options.metrics),
  });
  options.metrics?.watchLanes(lanes.served);
  const handle = (req: IncomingMessage, res: ServerResponse) => void (health(req, res) || fast(req, res));
  return { yoga, handle, lanes };
}
