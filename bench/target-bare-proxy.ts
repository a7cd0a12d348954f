/** Child process: the bare proxy baseline. Env: UPSTREAM_URL (ending in /v1). */
import { createServer } from 'node:http';
import { createBareProxy } from './bare-proxy.ts';
import { announce, requireEnv } from './child.ts';
import { keepAlive, listenLoopback } from './listen.ts';

const proxy = createBareProxy(new URL(requireEnv('UPSTREAM_URL')));
announce(await listenLoopback(keepAlive(createServer(proxy.handler))));
