import { Counter, Gauge, type Registry } from 'prom-client';
import type { RateLimitStats } from '../stores/rate-limit-counts.ts';
import type { RedisState } from '../stores/redis.ts';
import type { DocumentStoreStats } from '../stores/registered-documents.ts';
import type { CacheStats } from '../stores/response-cache.ts';

/*
 * The metrics whose values another part of the gateway keeps (its lanes, its log, its stores):
 * each watcher registers series that read those values when /metrics is scraped, so the part that
 * counts never touches the registry. metrics.ts offers them as `Metrics.watch*`.
 */

const REDIS_STATE = { up: 0, connecting: 1, down: 2 } as const;

/** A counter whose value another part keeps: read when /metrics is scraped. */
function countedAtScrape(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** The same, one series per value of `label`: `read` gives each value's count. */
function countedByLabelAtScrape(
  registry: Registry,
  name: string,
  help: string,
  label: string,
  read: () => Record<string, number>,
): void {
  new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      this.reset();
      for (const [value, count] of Object.entries(read())) this.inc({ [label]: value }, count);
    },
  });
}

/** The shared Redis's state (its breaker). */
export function watchRedis(registry: Registry, redis: { readonly state: RedisState }): void {
  new Gauge({
    name: 'pet_gateway_redis_state',
    help: 'The shared Redis (response cache, rate limit): 0 up, 1 connecting, 2 down (its breaker open: not asked until a probe answers).',
    registers: [registry],
    // Across workers, the worst of them.
    aggregator: 'max',
    collect() {
      this.set(REDIS_STATE[redis.state]);
    },
  });
}

/** The requests each lane answered. */
export function watchLanes(
  registry: Registry,
  served: { readonly fast: number; readonly yoga: number; readonly planned: number },
): void {
  countedByLabelAtScrape(
    registry,
    'pet_gateway_lane_requests_total',
    'HTTP requests by the lane that answered: fast (prepared operations) or yoga (all others).',
    'lane',
    () => ({ fast: served.fast, yoga: served.yoga }),
  );
  countedAtScrape(
    registry,
    'pet_gateway_planned_requests_total',
    'Of the fast lane requests, those a compiled plan of upstream calls answered (no GraphQL execution).',
    () => served.planned,
  );
}

/** Log lines dropped because stdout's reader stalled past the buffer or writing failed. */
export function watchLog(registry: Registry, log: { readonly dropped: number }): void {
  countedAtScrape(
    registry,
    'pet_gateway_log_lines_dropped_total',
    'Log lines dropped: the stdout reader stalled past LOG_BUFFER_BYTES, or writing the log failed.',
    () => log.dropped,
  );
}

/** The requests the rate limit refused and the decisions its Redis could not take. */
export function watchRateLimit(registry: Registry, stats: RateLimitStats): void {
  countedAtScrape(
    registry,
    'pet_gateway_rate_limited_total',
    'GraphQL requests refused 429 by the rate limit: RATE_LIMITED (their API key used up its minute) and REFUSED_KEYS_LIMITED (their address sent too many refused keys).',
    () => stats.limited,
  );
  countedAtScrape(
    registry,
    'pet_gateway_refused_keys_limited_total',
    'Of those, requests refused REFUSED_KEYS_LIMITED: a key not accepted yet, from an address over RATE_LIMIT_REFUSED_KEYS_PER_MINUTE.',
    () => stats.refusedKeysLimited,
  );
  countedAtScrape(
    registry,
    'pet_gateway_rate_limit_store_errors_total',
    'Rate limit decisions taken by the in-process fallback because Redis did not answer.',
    () => stats.storeErrors,
  );
}

/** The APQ store's lookups, registrations and failures (see docs/mobile.md). */
export function watchDocumentStore(registry: Registry, stats: DocumentStoreStats): void {
  countedByLabelAtScrape(
    registry,
    'pet_gateway_apq_lookups_total',
    'APQ hashes looked up in the store by result: hit, or miss (answered PersistedQueryNotFound).',
    'result',
    () => ({ hit: stats.hits, miss: stats.misses }),
  );
  countedAtScrape(
    registry,
    'pet_gateway_apq_registered_total',
    'Documents registered in the APQ store (hash verified, document validated).',
    () => stats.registered,
  );
  countedAtScrape(
    registry,
    'pet_gateway_apq_store_errors_total',
    'APQ store commands that failed or timed out (each a miss or a lost registration), and Redis connection errors.',
    () => stats.errors,
  );
}

/** The response cache's hit, miss and error counts. */
export function watchCache(registry: Registry, stats: CacheStats): void {
  // The store counts; this reads its counters at scrape time.
  countedByLabelAtScrape(
    registry,
    'pet_gateway_response_cache_lookups_total',
    'Response cache lookups by result: hit, miss, or error (served from the upstream).',
    'result',
    () => ({ hit: stats.hits, miss: stats.misses, error: stats.errors }),
  );
}

/** What the live lists count (live/watches.ts's LiveStats). */
export interface LiveCounts {
  readonly open: number;
  readonly polls: number;
  readonly pollFailures: number;
  readonly changesSent: number;
  readonly refused: { readonly per_key: number; readonly instance: number };
}

/** Live subscriptions: open streams, polls of the upstream, changes sent, refusals by bound. */
export function watchLive(registry: Registry, live: LiveCounts): void {
  new Gauge({
    name: 'pet_gateway_live_subscriptions',
    help: 'Open live subscriptions (subscription { pets } and @live queries) on this instance.',
    registers: [registry],
    collect() {
      this.set(live.open);
    },
  });
  countedAtScrape(
    registry,
    'pet_gateway_live_polls_total',
    'Polls made for live subscriptions: a list asked again, a live query run again (one per watched caller and arguments per LIVE_POLL_MS, and one after each create).',
    () => live.polls,
  );
  countedAtScrape(
    registry,
    'pet_gateway_live_poll_failures_total',
    'Live polls the upstream failed (each sent to the subscribers as an error event).',
    () => live.pollFailures,
  );
  countedAtScrape(
    registry,
    'pet_gateway_live_changes_sent_total',
    'Changed results sent to live subscribers (first events not counted).',
    () => live.changesSent,
  );
  countedByLabelAtScrape(
    registry,
    'pet_gateway_live_refused_total',
    'Live subscriptions refused at a bound: per_key (LIVE_MAX_PER_KEY) or instance (LIVE_MAX_STREAMS).',
    'bound',
    () => live.refused,
  );
}
