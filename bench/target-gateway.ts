/**
 * Child process: the gateway, wired as `src/main.ts` wires it (its config defaults for the upstream
 * pool, deadline and limits, and its HTTP server), on a free loopback port. Env: UPSTREAM_URL
 * (ending in /v1). Announces `<origin>/graphql`.
 *
 * For a CPU profile: `npm run bench -- --profile`, or start this file by hand under `--cpu-prof`
 * with UPSTREAM_URL set, load it, then Ctrl-C.
 */
import { loadConfig } from '../src/config.ts';
import { createHttpServer } from '../src/http-server.ts';
import { createLogger } from '../src/observability/logging.ts';
import { createGateway } from '../src/server.ts';
import { createUpstreamClient } from '../src/upstream/client.ts';
import { announce, requireEnv } from './child.ts';
import { listenLoopback } from './listen.ts';

requireEnv('UPSTREAM_URL');
const config = loadConfig(process.env);
const upstream = createUpstreamClient({
  baseUrl: config.upstreamUrl as URL,
  timeoutMs: config.upstreamTimeoutMs,
  connections: config.upstreamConnections,
});
const gateway = createGateway({ upstream, limits: config.limits, logger: createLogger(config.logLevel) });
announce(`${await listenLoopback(createHttpServer(gateway))}/graphql`);
