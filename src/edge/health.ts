import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RedisHealth } from '../stores/redis.ts';
import type { UpstreamClient } from '../upstream/client.ts';

/** How long a readiness answer is reused: a load balancer polling every second costs one probe. */
const READINESS_CACHE_MS = 1500;

export interface HealthOptions {
  upstream: UpstreamClient;
  redis?: RedisHealth;
  /** True once the process is shutting down: readiness fails at once, so load balancers stop sending. */
  draining?: () => boolean;
  /**
   * The long-lived streams held now (live subscriptions, WebSockets): reported in both answers, so
   * an operator sees what a drain or a rolling restart will end.
   */
  streams?: () => { subscriptions: number; webSockets: number };
}

/**
 * `/health` (liveness: 200 while the process serves HTTP) and `/readiness` (200 while the upstream
 * answers HTTP, 503 otherwise and from the moment the process starts shutting down), both with a JSON body that says why: the upstream's breaker and
 * reachability, Redis's state and what is degraded without it. Redis never fails readiness: without
 * it the gateway still answers (uncached, limited per instance). Served at the edge, before either
 * lane, and answered for any method; returns false for every other path.
 */
export function createHealthEndpoints(
  options: HealthOptions,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  let last: { at: number; ready: Promise<boolean> } | undefined;
  const reachable = () => {
    const now = Date.now();
    if (!last || now - last.at > READINESS_CACHE_MS) last = { at: now, ready: options.upstream.probe() };
    return last.ready;
  };
  const dependencies = (upstreamReachable?: boolean) => {
    const { redis } = options;
    const degraded = redis && redis.state !== 'up' ? redis.uses : [];
    return {
      upstream: {
        ...(upstreamReachable === undefined ? {} : { reachable: upstreamReachable }),
        breaker: options.upstream.breakerState,
      },
      ...(redis ? { redis: redis.state } : {}),
      ...(degraded.length > 0 ? { degraded } : {}),
      ...(options.streams ? { streams: options.streams() } : {}),
    };
  };
  const answer = (res: ServerResponse, status: number, body: object) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
    });
    res.end(text);
  };
  return (req, res) => {
    const path = pathOf(req.url);
    if (path === '/health') {
      answer(res, 200, { status: 'ok', ...dependencies() });
      return true;
    }
    if (path !== '/readiness') return false;
    if (options.draining?.()) {
      answer(res, 503, { status: 'draining', ...dependencies() });
      return true;
    }
    reachable().then(
      (ready) =>
        answer(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', ...dependencies(ready) }),
      () => answer(res, 503, { status: 'not ready', ...dependencies(false) }),
    );
    return true;
  };
}

function pathOf(url: string | undefined): string | undefined {
  // Every request passes here: anything not starting `/h` or `/r` (all of /graphql) is out at once.
  const second = url?.charCodeAt(1);
  if (url === undefined || (second !== 0x68 && second !== 0x72) || url.length > 64 || url[0] !== '/')
    return undefined;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
