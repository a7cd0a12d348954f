import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { RedisState } from '../stores/redis.ts';
import type { ConnectionClose } from './metrics.ts';

/**
 * What an operator reads when the shared Redis goes away or comes back: one line per change of
 * state, never one per request, naming only what uses Redis here. Each line carries the process id:
 * several instances (or workers) that see Redis come back in the same millisecond write the same
 * words, and without it their lines read as one process saying it twice.
 */
export function redisStateLines(
  logger: Logger,
  config: Pick<Config, 'redisUrl' | 'responseCache' | 'rateLimit' | 'apq'>,
): (state: RedisState, error?: Error) => void {
  const redis = config.redisUrl?.host;
  const meanwhile = [
    ...(config.responseCache === 'redis' ? ['response cache bypassed'] : []),
    ...(config.rateLimit?.store === 'redis' ? ['rate limit per instance'] : []),
    ...(config.apq?.store === 'redis' ? ['APQ hashes not found'] : []),
  ];
  const downLine = `Redis unavailable: ${[...meanwhile, 'until it answers again'].join(', ')}`;
  let last: RedisState | undefined;
  return (state, error) => {
    if (state === last) return;
    const wasDown = last === 'down';
    last = state;
    if (state === 'up') {
      if (wasDown) logger.warn({ redis, pid: process.pid }, 'Redis answering: shared again');
      else logger.info({ redis, pid: process.pid }, 'Redis connected');
    } else if (state === 'down') logger.warn({ redis, pid: process.pid, error: error?.message }, downLine);
  };
}

/** Connections the listener closed itself: at most one line per this long, with the counts since the last. */
const CONNECTION_LINE_EVERY_MS = 10_000;

export function connectionCloseLines(
  logger: Logger,
  maxConnections: number,
): (reason: ConnectionClose) => void {
  const closedSince: Record<ConnectionClose, number> = {
    refused: 0,
    evicted: 0,
    timeout: 0,
    slow_body: 0,
    unread_body: 0,
    probe_only: 0,
    slow_reader: 0,
    flood: 0,
    unauthenticated: 0,
  };
  let lastLine = 0;
  return (reason) => {
    closedSince[reason]++;
    if (Date.now() - lastLine < CONNECTION_LINE_EVERY_MS) return;
    lastLine = Date.now();
    logger.warn(
      { ...closedSince, maxConnections },
      'client connections closed: at the connection cap, too slow to send or to read, or flooding',
    );
    for (const key of Object.keys(closedSince) as ConnectionClose[]) closedSince[key] = 0;
  };
}
