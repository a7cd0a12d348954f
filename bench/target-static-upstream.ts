/** Child process: the static upstream. Env: BENCH_API_KEY. Announces `<origin>/v1`. */
import { createServer } from 'node:http';
import { announce, requireEnv } from './child.ts';
import { keepAlive, listenLoopback } from './listen.ts';
import { createStaticUpstream } from './static-upstream.ts';

const upstream = createStaticUpstream(requireEnv('BENCH_API_KEY'));
const origin = await listenLoopback(keepAlive(createServer(upstream.handler)));
announce(`${origin}/v1`, { calls: upstream.calls });
