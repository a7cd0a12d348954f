import { boolean, integer, oneOf } from './env-values.ts';

/** Live subscriptions (`subscription { pets }`): how often lists are asked for again, and the bounds. */
export interface LiveSettings {
  /** How often each watched (caller, arguments) list is asked for again. @default 5000 */
  readonly pollMs: number;
  /** Open subscriptions per API key on one instance. @default 10 */
  readonly maxPerKey: number;
  /** Open subscriptions on one instance. @default 2000 */
  readonly maxStreams: number;
  /**
   * A subscriber that leaves a change unread this long is ended as a slow reader (its client
   * stopped reading), its slot and connection freed. @default 30000
   */
  readonly slowReaderMs: number;
  /** Where creates are announced: this instance only, or every instance sharing the Redis. @default 'memory' */
  readonly store: 'memory' | 'redis';
}

/** LIVE (on/off), LIVE_POLL_MS, LIVE_MAX_PER_KEY, LIVE_MAX_STREAMS, LIVE_SLOW_READER_MS and LIVE_STORE; undefined when off. */
export function liveSettings(env: Record<string, string | undefined>): LiveSettings | undefined {
  if (!boolean(env, 'LIVE', true)) return undefined;
  const store = oneOf(env, 'LIVE_STORE', ['memory', 'redis'], 'memory');
  return Object.freeze({
    // At least a second: every watched list costs the upstream one call per interval.
    pollMs: integer(env, 'LIVE_POLL_MS', 5000, 1000, 3_600_000),
    maxPerKey: integer(env, 'LIVE_MAX_PER_KEY', 10, 1, 10_000),
    maxStreams: integer(env, 'LIVE_MAX_STREAMS', 2000, 1, 1_000_000),
    slowReaderMs: integer(env, 'LIVE_SLOW_READER_MS', 30_000, 1000, 3_600_000),
    store,
  });
}
