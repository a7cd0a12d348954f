/**
 * Child process: the static upstream. Env: BENCH_API_KEYS (comma-separated); BENCH_PET_IDS `small`
 * (default) or `int64` (ids beyond 2^53). Announces `<origin>/v1`.
 */
import { createServer } from 'node:http';
import { announce, requireKeys } from './child.ts';
import { keepAlive, listenLoopback } from './listen.ts';
import { createStaticUpstream } from './static-upstream.ts';

const ids = process.env.BENCH_PET_IDS === 'int64' ? 'int64' : 'small';
const upstream = createStaticUpstream(requireKeys(), ids);
const origin = await listenLoopback(keepAlive(createServer(upstream.handler)));
announce(`${origin}/v1`, { calls: upstream.calls, keysSeen: upstream.takeKeysSeen });
