import {
  createCounter,
  createHistogram,
  type FillLabelsFnParams,
  usePrometheus,
} from '@graphql-yoga/plugin-prometheus';
import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { RateLimitStats } from '../stores/rate-limit-counts.ts';
import type { RedisState } from '../stores/redis.ts';
import type { DocumentStoreStats } from '../stores/registered-documents.ts';
import type { CacheStats } from '../stores/response-cache.ts';
import type { UpstreamObserver } from '../upstream/observer.ts';
import { createLabelBudget } from './labels.ts';

/** Why the listener closed a client connection itself. */
export type ConnectionClose =
  /** At the cap (or the address's share of it) with every connection busy: the new one was closed at once. */
  | 'refused'
  /** At the cap (or the address's share): the oldest idle connection was closed to make room for a new one. */
  | 'evicted'
  /** Headers or body not complete within headersTimeoutMs / requestTimeoutMs: answered 408. */
  | 'timeout'
  /** A request body arriving slower than the minimum data rate after its grace: answered 408. */
  | 'slow_body'
  /** A connection taken past the cap for a probe that asked for something else: answered 503. */
  | 'probe_only';

export interface Metrics {
  registry: Registry;
  /** Serves `/metrics` and records operations, their durations and errors by code. */
  plugin: Plugin;
  /** The exposition as a `/metrics` answer. */
  respond(fetchAPI: { Response: typeof Response }): Promise<Response>;
  /** Records upstream calls, retries, short circuits, coalesced GETs and breaker state. */
  upstream: UpstreamObserver;
  /** Records a deprecated field's use by the client's self-declared name. */
  deprecatedUse(fields: string[], clientName: string | undefined): void;
  /** Exposes the response cache's hit, miss and error counts. */
  watchCache(stats: CacheStats): void;
  /**
   * Records an operation the fast lane served (without errors, by construction) in the same
   * series the Yoga plugin records its operations in.
   */
  servedFast(operation: FastOperation): void;
  /** Exposes the requests each lane answered. */
  watchLanes(served: { fast: number; yoga: number; planned: number }): void;
  /** Exposes the requests the rate limit refused and the decisions its Redis could not take. */
  watchRateLimit(stats: RateLimitStats): void;
  /** Log lines dropped because stdout's reader stalled past the buffer or writing failed. */
  watchLog(log: { readonly dropped: number }): void;
  /** Counts a client connection the listener closed itself (at the cap, or too slow). */
  connectionClosed(reason: ConnectionClose): void;
  /** Exposes the shared Redis's state (its breaker). */
  watchRedis(redis: { readonly state: RedisState }): void;
  /** Exposes the APQ store's lookups, registrations and failures (see docs/mobile.md). */
  watchDocumentStore(stats: DocumentStoreStats): void;
}

export interface FastOperation {
  operationName: string | undefined;
  operationType: string;
  /** From the start of execution to its result. */
  executeSeconds: number;
  /** From the request's arrival to its answer. */
  httpSeconds: number;
  status: number;
  /** The HTTP method: the fast lane serves POST and, for queries, GET. */
  method: 'GET' | 'POST';
}

/** Seconds, for operation and HTTP request durations (both lanes record into the same series). */
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const BREAKER_STATE = { closed: 0, 'half-open': 1, open: 2 } as const;
const REDIS_STATE = { up: 0, connecting: 1, down: 2 } as const;

export interface MetricsOptions {
  /**
   * What `/metrics` serves; by default this registry's text. With WORKERS > 1, the primary's
   * aggregate over every worker (see cluster-metrics.ts).
   */
  exposition?: () => Promise<string>;
}

/**
 * All of the gateway's Prometheus metrics, in one registry of their own. No label carries a token,
 * an id or free text: routes are templates, names are bounded (see labels.ts), codes come from
 * the documented table.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const exposition = options.exposition ?? (() => registry.metrics());
  collectDefaultMetrics({ register: registry, prefix: 'pet_gateway_' });
  const operationName = createLabelBudget(200);
  const clientName = createLabelBudget(100);
  const errorCode = createLabelBudget(100);
  const operationLabels = (params: FillLabelsFnParams) => ({
    operationName: operationName(params.operationName, 'anonymous'),
    operationType: params.operationType ?? 'unknown',
  });

  const operations = createCounter<'execute' | 'subscribe', 'operationName' | 'operationType'>({
    registry,
    counter: {
      name: 'pet_gateway_operations_total',
      help: 'GraphQL operations executed, by operation name and type.',
      labelNames: ['operationName', 'operationType'],
    },
    fillLabelsFn: operationLabels,
  });
  const operationDuration = createHistogram<'execute' | 'subscribe', 'operationName' | 'operationType'>({
    registry,
    histogram: {
      name: 'pet_gateway_operation_duration_seconds',
      help: 'Time to execute a GraphQL operation (upstream calls included), by operation name.',
      labelNames: ['operationName', 'operationType'],
      buckets: REQUEST_BUCKETS,
    },
    fillLabelsFn: operationLabels,
  });
  const httpDuration = createHistogram<'request', 'method' | 'statusCode'>({
    registry,
    histogram: {
      name: 'pet_gateway_http_request_duration_seconds',
      help: 'Time to answer an HTTP request to /graphql, by method and status.',
      labelNames: ['method', 'statusCode'],
      buckets: REQUEST_BUCKETS,
    },
    fillLabelsFn: (params) => {
      const { request, response } = params as unknown as { request: Request; response: Response };
      return { method: request.method, statusCode: response.status };
    },
  });

  const prometheus = usePrometheus({
    registry,
    // Served at /metrics by yoga/server.ts's useEndpoint: the plugin's own endpoint check parses every request's URL.
    endpoint: false,
    metrics: {
      graphql_envelop_request: operations,
      graphql_envelop_request_duration: operationDuration,
      graphql_envelop_error_result: createCounter({
        registry,
        counter: {
          name: 'pet_gateway_errors_total',
          help: 'GraphQL errors in responses, by extensions.code and the phase that raised them.',
          labelNames: ['operationName', 'code', 'phase'],
        },
        fillLabelsFn: (params) => ({
          operationName: operationName(params.operationName, 'anonymous'),
          code: errorCode(
            ((params.error as GraphQLError | undefined)?.extensions?.code as string | undefined) ??
              'INTERNAL_SERVER_ERROR',
          ),
          phase: params.errorPhase ?? 'unknown',
        }),
      }),
      graphql_envelop_phase_parse: false,
      graphql_envelop_phase_validate: false,
      graphql_envelop_phase_context: false,
      graphql_envelop_phase_execute: false,
      graphql_envelop_request_time_summary: false,
      graphql_envelop_deprecated_field: false,
      graphql_envelop_schema_change: false,
      graphql_yoga_http_duration: httpDuration,
    },
  });

  /** Answers `GET /metrics` (yoga/server.ts serves it with useEndpoint, beside this plugin). */
  const respond = async (fetchAPI: { Response: typeof Response }) =>
    new fetchAPI.Response(await exposition(), { headers: { 'Content-Type': registry.contentType } });
  const plugin: Plugin = {
    onPluginInit({ addPlugin }) {
      addPlugin(prometheus);
    },
  };

  const upstreamDuration = new Histogram({
    name: 'pet_gateway_upstream_request_duration_seconds',
    help: 'One HTTP exchange with the REST upstream, by route template, status and outcome.',
    labelNames: ['route', 'status', 'outcome'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'pet_gateway_upstream_retries_total',
    help: 'GET retries, by route template and reason.',
    labelNames: ['route', 'reason'],
    registers: [registry],
  });
  const shortCircuits = new Counter({
    name: 'pet_gateway_upstream_short_circuits_total',
    help: 'Calls refused by the open circuit breaker without touching the network.',
    labelNames: ['route'],
    registers: [registry],
  });
  const coalesced = new Counter({
    name: 'pet_gateway_upstream_coalesced_total',
    help: "GETs served by the same caller's identical GET already in flight: upstream requests saved.",
    labelNames: ['route'],
    registers: [registry],
  });
  const breakerState = new Gauge({
    name: 'pet_gateway_upstream_breaker_state',
    help: 'The upstream circuit breaker: 0 closed, 1 half-open, 2 open.',
    registers: [registry],
    // Each worker has its own breaker: across workers, the worst of them.
    aggregator: 'max',
  });
  const breakerTransitions = new Counter({
    name: 'pet_gateway_upstream_breaker_transitions_total',
    help: 'Circuit breaker state changes, by the state entered.',
    labelNames: ['state'],
    registers: [registry],
  });
  const deprecated = new Counter({
    name: 'pet_gateway_deprecated_field_use_total',
    help: 'Operations that used a deprecated field, by field and graphql-client-name.',
    labelNames: ['field', 'client'],
    registers: [registry],
  });
  breakerState.set(0);
  const connectionsClosed = new Counter({
    name: 'pet_gateway_client_connections_closed_total',
    help: 'Client connections the gateway closed itself: refused (at the cap or the address share, all busy), evicted (the oldest idle one, at the cap or the address share), timeout (request not in within its time; answered 408), slow_body (a request body under the minimum rate; 408), probe_only (a connection past the cap asked for more than /health or /readiness; 503).',
    labelNames: ['reason'],
    registers: [registry],
  });

  /** A counter whose value another part keeps: read when /metrics is scraped. */
  const countedAtScrape = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });

  /** The same, one series per value of `label`: `read` gives each value's count. */
  const countedByLabelAtScrape = (
    name: string,
    help: string,
    label: string,
    read: () => Record<string, number>,
  ) =>
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

  return {
    connectionClosed: (reason) => connectionsClosed.inc({ reason }),
    watchRedis(redis) {
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
    },
    registry,
    plugin,
    respond,
    upstream: {
      attempt: (route) => (end) => {
        upstreamDuration.observe(
          { route, status: end.status === undefined ? 'none' : String(end.status), outcome: end.outcome },
          end.durationMs / 1000,
        );
      },
      retry: (route, reason) => retries.inc({ route, reason }),
      shortCircuit: (route) => shortCircuits.inc({ route }),
      coalesced: (route) => coalesced.inc({ route }),
      breaker: (state) => {
        breakerState.set(BREAKER_STATE[state]);
        breakerTransitions.inc({ state });
      },
    },
    deprecatedUse(fields, name) {
      for (const field of fields) deprecated.inc({ field, client: clientName(name, 'unknown') });
    },
    servedFast(operation) {
      // The label values Yoga's plugin records for the same operation (envelop names an
      // unnamed one "Anonymous").
      const labels = operationLabels({
        operationName: operation.operationName ?? 'Anonymous',
        operationType: operation.operationType,
      } as FillLabelsFnParams);
      operations.counter.inc(labels);
      operationDuration.histogram.observe(labels, operation.executeSeconds);
      httpDuration.histogram.observe(
        { method: operation.method, statusCode: operation.status },
        operation.httpSeconds,
      );
    },
    watchLanes(served) {
      countedByLabelAtScrape(
        'pet_gateway_lane_requests_total',
        'HTTP requests by the lane that answered: fast (prepared operations) or yoga (all others).',
        'lane',
        () => ({ fast: served.fast, yoga: served.yoga }),
      );
      countedAtScrape(
        'pet_gateway_planned_requests_total',
        'Of the fast lane requests, those a compiled plan of upstream calls answered (no GraphQL execution).',
        () => served.planned,
      );
    },
    watchLog(log) {
      countedAtScrape(
        'pet_gateway_log_lines_dropped_total',
        'Log lines dropped: the stdout reader stalled past LOG_BUFFER_BYTES, or writing the log failed.',
        () => log.dropped,
      );
    },
    watchRateLimit(stats) {
      countedAtScrape(
        'pet_gateway_rate_limited_total',
        'GraphQL requests refused 429 by the rate limit: RATE_LIMITED (their API key used up its minute) and REFUSED_KEYS_LIMITED (their address sent too many refused keys).',
        () => stats.limited,
      );
      countedAtScrape(
        'pet_gateway_refused_keys_limited_total',
        'Of those, requests refused REFUSED_KEYS_LIMITED: a key not accepted yet, from an address over RATE_LIMIT_REFUSED_KEYS_PER_MINUTE.',
        () => stats.refusedKeysLimited,
      );
      countedAtScrape(
        'pet_gateway_rate_limit_store_errors_total',
        'Rate limit decisions taken by the in-process fallback because Redis did not answer.',
        () => stats.storeErrors,
      );
    },
    watchDocumentStore(stats) {
      countedByLabelAtScrape(
        'pet_gateway_apq_lookups_total',
        'APQ hashes looked up in the store by result: hit, or miss (answered PersistedQueryNotFound).',
        'result',
        () => ({ hit: stats.hits, miss: stats.misses }),
      );
      countedAtScrape(
        'pet_gateway_apq_registered_total',
        'Documents registered in the APQ store (hash verified, document validated).',
        () => stats.registered,
      );
      countedAtScrape(
        'pet_gateway_apq_store_errors_total',
        'APQ store commands that failed or timed out (each a miss or a lost registration), and Redis connection errors.',
        () => stats.errors,
      );
    },
    watchCache(stats) {
      // The store counts; this reads its counters at scrape time.
      countedByLabelAtScrape(
        'pet_gateway_response_cache_lookups_total',
        'Response cache lookups by result: hit, miss, or error (served from the upstream).',
        'result',
        () => ({ hit: stats.hits, miss: stats.misses, error: stats.errors }),
      );
    },
  };
}
