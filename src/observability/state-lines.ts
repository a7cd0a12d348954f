import type { Logger } from 'pino';
import type { RedisState } from '../stores/redis.ts';
import type { ConnectionClose } from './metrics.ts';

/**
 * What an operator reads when the shared Redis goes away or comes back: one line per change of
 * state, never one per request.
 */
export function redisStateLines(
  logger: Logger,
  redisUrl: URL | undefined,
): (state: RedisState, error?: Error) => void {
  let wasDown = false;
  return (state, error) => {
    if (state === 'up' && !wasDown) logger.info({ redis: redisUrl?.host }, 'Redis connected');
    else if (state === 'up') logger.warn({ redis: redisUrl?.host }, 'Redis answering: shared again');
    wasDown = state === 'down';
    if (state === 'down')
      logger.warn(
        { redis: redisUrl?.host, error: error?.message },
        'Redis unavailable: response cache bypassed, rate limit per instance, APQ hashes not found, until it answers again',
      );
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
    probe_only: 0,
  };
  let lastLine = 0;
  return (reason) => {
    closedSince[reason]++;
    if (Date.now() - lastLine < CONNECTION_LINE_EVERY_MS) return;
    lastLine = Date.now();
    logger.warn(
      { ...closedSince, maxConnections },
      'client connections closed: at the connection cap, or too slow to send a request',
    );
    for (const key of Object.keys(closedSince) as ConnectionClose[]) closedSince[key] = 0;
  };
}
