/**
 * Child process: the gateway, wired as `src/main.ts` wires it (its config defaults for the upstream
 * pool, deadline, limits, CORS and metrics, and its HTTP server), on a free loopback port. Env: UPSTREAM_URL
 * (ending in /v1). Announces `<origin>/graphql`.
 *
 * For a CPU profile: `npm run bench -- --profile`, or start this file by hand under `--cpu-prof`
 * with UPSTREAM_URL set, load it, then Ctrl-C.
 */
import { loadConfig } from '../src/config.ts';
import { createEdge } from '../src/http/edge.ts';
import { createHttpServer } from '../src/http/listener.ts';
import { createRateLimit } from '../src/http/rate-limit.ts';
import { createLogger } from '../src/observability/logging.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { createUpstreamClient } from '../src/upstream/client.ts';
import { announce, requireEnv } from './child.ts';
import { listenLoopback } from './listen.ts';

requireEnv('UPSTREAM_URL');
const config = loadConfig(process.env);
// Metrics are on by default in main.ts (METRICS=true), and they cost per request: measured with them.
const metrics = config.metrics ? createMetrics() : undefined;
const upstream = createUpstreamClient({
  baseUrl: config.upstreamUrl as URL,
  timeoutMs: config.upstreamTimeoutMs,
  connections: config.upstreamConnections,
  // As main.ts: UPSTREAM_COALESCE (on by default) decides; measured both ways in the closing note.
  coalesce: config.upstreamCoalesce,
  observers: metrics ? [metrics.upstream] : [],
});
// RATE_LIMIT_PER_MINUTE, as main.ts wires it (memory store here: the bench runs no Redis).
const rateLimit = config.rateLimit
  ? createRateLimit({ perMinute: config.rateLimit.perMinute, store: 'memory' })
  : undefined;
if (rateLimit && metrics) metrics.watchRateLimit(rateLimit.stats);
const edge = createEdge({
  fastLane: config.fastLane,
  plans: config.plans,
  upstream,
  limits: config.limits,
  logger: createLogger(config.logLevel),
  corsOrigins: config.corsOrigins,
  ...(rateLimit ? { rateLimit } : {}),
  ...(metrics ? { metrics } : {}),
});
announce(`${await listenLoopback(createHttpServer(edge.handle))}/graphql`);
