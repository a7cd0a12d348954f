/**
 * Child process: the gateway, wired as `src/main.ts` wires it (its config defaults for the upstream
 * pool and deadline), on a free loopback port. Env: UPSTREAM_URL (ending in /v1). Announces `<origin>/graphql`.
 *
 * For a CPU profile: `npm run bench -- --profile` (or start this file by hand under `--cpu-prof` with
 * UPSTREAM_URL set, load it, then Ctrl-C).
 */
import { createServer } from 'node:http';
import { loadConfig } from '../src/config.ts';
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
const origin = await listenLoopback(createServer(createGateway({ upstream })));
announce(`${origin}/graphql`);
