/** Child process: the JSON-rewriting hop. Env: UPSTREAM_URL (ending in /v1). */
import { createServer } from 'node:http';
import { announce, requireEnv } from './child.ts';
import { createJsonHop } from './json-hop.ts';
import { keepAlive, listenLoopback } from './listen.ts';

const hop = createJsonHop(new URL(requireEnv('UPSTREAM_URL')));
announce(await listenLoopback(keepAlive(createServer(hop.handler))));
