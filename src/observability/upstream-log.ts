import type { Logger } from 'pino';
import { isOverloadStatus } from '../upstream/errors.ts';
import type { AttemptEnd, UpstreamObserver } from '../upstream/observer.ts';

/** At most one "unreachable" line per this long, carrying the counts since the last one. */
const REPORT_EVERY_MS = 10_000;

/**
 * Warn lines an operator needs on a bad day, at LOG_LEVEL=warn: every change of the upstream's
 * circuit breaker, and attempts that found the upstream unreachable (refused, reset, 502/503/504)
 * or too slow, at most one line per 10 s with their counts. Failed operations themselves are logged
 * at info, one line each: a dead upstream must not write one warning per request.
 */
export function createUpstreamLog(logger: Logger, now: () => number = Date.now): UpstreamObserver {
  let unavailable = 0;
  let timeout = 0;
  let lastReport = Number.NEGATIVE_INFINITY;
  // One function for every attempt: no closure per upstream call.
  const end = (attempt: AttemptEnd) => {
    const overloaded = isOverloadStatus(attempt.status);
    if (attempt.outcome === 'unavailable' || overloaded) unavailable++;
    else if (attempt.outcome === 'timeout') timeout++;
    else return;
    if (now() - lastReport < REPORT_EVERY_MS) return;
    lastReport = now();
    logger.warn({ unavailable, timeout }, 'upstream unreachable or not answering in time');
    unavailable = 0;
    timeout = 0;
  };
  return {
    attempt: () => end,
    breaker: (state) => {
      logger.warn(
        { breaker: state },
        state === 'open'
          ? 'upstream circuit breaker open: failing fast without calling the upstream'
          : state === 'half-open'
            ? 'upstream circuit breaker half-open: one probe call let through'
            : 'upstream circuit breaker closed: upstream answering again',
      );
    },
  };
}
