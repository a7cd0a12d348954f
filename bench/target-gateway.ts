/**
 * Child process: the gateway as `src/main.ts` composes it (composeGateway with the config's
 * defaults for the upstream pool, deadline, limits, CORS, rate limit and metrics), on a free
 * loopback port. Env: UPSTREAM_URL (ending in /v1). Announces `<origin>/graphql`.
 *
 * For a CPU profile: `npm run bench -- --profile`, or start this file by hand under `--cpu-prof`
 * with UPSTREAM_URL set, load it, then Ctrl-C.
 */
import { loadConfig } from '../src/config.ts';
import { composeGateway } from '../src/gateway.ts';
import { createLogger } from '../src/observability/logging.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { announce, requireEnv } from './child.ts';
import { listenLoopback } from './listen.ts';

requireEnv('UPSTREAM_URL');
const config = loadConfig(process.env);
// Metrics are on by default in main.ts (METRICS=true), and they cost per request: measured with them.
const metrics = config.metrics ? createMetrics() : undefined;
const { server } = composeGateway(config, {
  upstreamUrl: config.upstreamUrl as URL,
  logger: createLogger(config.logLevel),
  ...(metrics ? { metrics } : {}),
});
announce(`${await listenLoopback(server)}/graphql`);
