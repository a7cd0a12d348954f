import {
  createCounter,
  createHistogram,
  type FillLabelsFnParams,
  type PrometheusTracingPluginConfig,
  usePrometheus,
} from '@graphql-yoga/plugin-prometheus';
import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { CODES } from '../codes.ts';
import type { RateLimitStats } from '../stores/rate-limit-counts.ts';
import type { RedisState } from '../stores/redis.ts';
import type { DocumentStoreStats } from '../stores/registered-documents.ts';
import type { CacheStats } from '../stores/response-cache.ts';
import type { UpstreamObserver } from '../upstream/observer.ts';
import { createLabelBudget } from './labels.ts';
import { type McpToolCall, mcpToolCallMetric } from './mcp-metrics.ts';
import {
  type LiveCounts,
  watchCache,
  watchDocumentStore,
  watchLanes,
  watchLive,
  watchLog,
  watchRateLimit,
  watchRedis,
} from './metric-watchers.ts';
import { CLIENT_GONE_STATUS } from './operation-line.ts';
import { counterSeries, histogramSeries, SeriesCache } from './series.ts';
import { upstreamMetrics } from './upstream-metrics.ts';

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
  /** A request body still arriving after its answer went out, past the bound read and dropped (edge/connections.ts DROP_UNREAD_BODY). */
  | 'unread_body'
  /** A connection taken past the cap for a probe that asked for something else: answered 503. */
  | 'probe_only'
  /** A stream whose client stopped reading: unsent bytes past WS_MAX_BUFFERED_BYTES, a ping unanswered, or a live list's change left unread past LIVE_SLOW_READER_MS. */
  | 'slow_reader'
  /** A WebSocket that sent more than WS_MAX_MESSAGES_PER_SECOND messages in a second (1008). */
  | 'flood'
  /** A WebSocket whose connection_init carried no usable key (4403). */
  | 'unauthenticated';

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
  /** Observes the number of operations in one batched request (its operations count as usual). */
  batch(size: number): void;
  /** Observes what an operation cost (COST_REPORT=on), estimated and, once answered, actual. */
  cost(
    operationType: string | undefined,
    cost: { readonly estimated: number; readonly actual?: number },
  ): void;
  /** Exposes the live subscriptions' counts (open streams, polls, changes sent, refusals). */
  watchLive(live: LiveCounts): void;
  /** Exposes the shared Redis's state (its breaker). */
  watchRedis(redis: { readonly state: RedisState }): void;
  /** Exposes the APQ store's lookups, registrations and failures (see docs/mobile.md). */
  watchDocumentStore(stats: DocumentStoreStats): void;
  /** Records one MCP tool call: tool, outcome, client name and duration (src/mcp/). */
  mcpToolCall(call: McpToolCall): void;
}

export interface FastOperation {
  operationName: string | undefined;
  operationType: string;
  /** From the start of execution to its result. */
  executeSeconds: number;
  /**
   * From the request's arrival to its answer; undefined for a batch's entries but one, since the
   * HTTP request is one.
   */
  httpSeconds: number | undefined;
  status: number;
  /** The HTTP method: the fast lane serves POST and, for queries, GET. */
  method: 'GET' | 'POST';
}

/** Seconds, for operation and HTTP request durations (both lanes record into the same series). */
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

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
  // Registered in this order, which is the order /metrics lists them in.
  const { plugin, servedFast } = operationMetrics(registry);
  const upstream = upstreamMetrics(registry);
  const deprecatedUse = deprecatedFieldMetric(registry);
  const connectionClosed = connectionMetric(registry);
  const batch = batchMetric(registry);
  const cost = costMetric(registry);
  const mcpToolCall = mcpToolCallMetric(registry);
  return {
    mcpToolCall,
    connectionClosed,
    batch,
    cost,
    watchRedis: (redis) => watchRedis(registry, redis),
    registry,
    plugin,
    /** Answers `GET /metrics` (yoga/server.ts serves it with useEndpoint, beside this plugin). */
    respond: async (fetchAPI) =>
      new fetchAPI.Response(await exposition(), { headers: { 'Content-Type': registry.contentType } }),
    upstream,
    deprecatedUse,
    servedFast,
    watchLanes: (served) => watchLanes(registry, served),
    watchLog: (log) => watchLog(registry, log),
    watchRateLimit: (stats) => watchRateLimit(registry, stats),
    watchDocumentStore: (stats) => watchDocumentStore(registry, stats),
    watchCache: (stats) => watchCache(registry, stats),
    watchLive: (live) => watchLive(registry, live),
  };
}

type OperationLabel = 'operationName' | 'operationType';

/**
 * Operations, their durations and errors by code, and HTTP request durations: Yoga's Prometheus
 * plugin records its lane's, `servedFast` the fast lane's, in the same series.
 */
function operationMetrics(registry: Registry): Pick<Metrics, 'plugin' | 'servedFast'> {
  const operationName = createLabelBudget(200);
  const operationLabels = (params: FillLabelsFnParams) => ({
    operationName: operationName(params.operationName, 'anonymous'),
    operationType: params.operationType ?? 'unknown',
  });
  const { operations, operationDuration, httpDuration } = requestSeries(registry, operationLabels);
  const operationSeries = new SeriesCache<{ count: () => void; duration: (seconds: number) => void }>();
  const httpSeries = new SeriesCache<(seconds: number) => void>();
  const seriesOfOperation = (operationName: string | undefined, operationType: string) => {
    // The label values Yoga's plugin records for the same operation (envelop names an unnamed
    // one "Anonymous").
    const labels = operationLabels({
      operationName: operationName ?? 'Anonymous',
      operationType,
    } as FillLabelsFnParams);
    return {
      count: counterSeries(operations.counter, labels),
      duration: histogramSeries(operationDuration.histogram, labels),
    };
  };
  const prometheus = usePrometheus({
    registry,
    // Served at /metrics by yoga/server.ts's useEndpoint: the plugin's own endpoint check parses every request's URL.
    endpoint: false,
    metrics: {
      graphql_envelop_request: operations,
      graphql_envelop_request_duration: operationDuration,
      graphql_envelop_error_result: errorSeries(registry, operationName),
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
  return {
    plugin: {
      onPluginInit({ addPlugin }) {
        // Before the Prometheus plugin, so its validate hook finds the code already noted.
        addPlugin(noteValidationCodes);
        addPlugin(prometheus);
      },
    },
    servedFast(operation) {
      const { operationName, operationType, method, status } = operation;
      // An unnamed operation under a key no name can be: a name is never a number.
      const name = operationName ?? 0;
      const forOperation =
        operationSeries.get(operationType, name) ??
        operationSeries.add(seriesOfOperation(operationName, operationType), operationType, name);
      forOperation.count();
      forOperation.duration(operation.executeSeconds);
      if (operation.httpSeconds === undefined) return;
      const forHttp =
        httpSeries.get(method, status) ??
        httpSeries.add(
          histogramSeries(httpDuration.histogram, { method, statusCode: status }),
          method,
          status,
        );
      forHttp(operation.httpSeconds);
    },
  };
}

/** The operation count and duration, and the HTTP request duration, as the Prometheus plugin takes them. */
function requestSeries(
  registry: Registry,
  operationLabels: (params: FillLabelsFnParams) => Record<OperationLabel, string>,
) {
  const operations = createCounter<'execute' | 'subscribe', OperationLabel>({
    registry,
    counter: {
      name: 'pet_gateway_operations_total',
      help: 'GraphQL operations executed, by operation name and type.',
      labelNames: ['operationName', 'operationType'],
    },
    fillLabelsFn: operationLabels,
  });
  const operationDuration = createHistogram<'execute' | 'subscribe', OperationLabel>({
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
      // A client gone before its answer was written was sent nothing: counted with its log line's
      // status, as the fast lane counts it.
      return {
        method: request.method,
        statusCode: request.signal.aborted ? CLIENT_GONE_STATUS : response.status,
      };
    },
  });
  return { operations, operationDuration, httpDuration };
}

/**
 * The code a refused document was answered with, per request context. The Prometheus plugin counts
 * a failed validation without its errors, and a parse error before Yoga has given it a code: left
 * to itself it labels both `INTERNAL_SERVER_ERROR`, and an alert on internal errors would fire on
 * every bad client query.
 */
const validationCodes = new WeakMap<object, string>();

const noteValidationCodes: Plugin = {
  onValidate({ context }) {
    return ({ result }) => {
      const code = result[0]?.extensions?.code;
      if (result.length > 0)
        validationCodes.set(context, typeof code === 'string' ? code : VALIDATION_FAILED);
    };
  },
};

const VALIDATION_FAILED = CODES.GRAPHQL_VALIDATION_FAILED.code;

/** The code a client saw for an error the Prometheus plugin reports, by the phase that raised it. */
function clientCode(params: FillLabelsFnParams, context: unknown): string {
  const code = (params.error as GraphQLError | undefined)?.extensions?.code;
  if (typeof code === 'string') return code;
  if (params.errorPhase === 'parse') return CODES.GRAPHQL_PARSE_FAILED.code;
  if (params.errorPhase === 'validate') {
    return (typeof context === 'object' && context && validationCodes.get(context)) || VALIDATION_FAILED;
  }
  return CODES.INTERNAL_SERVER_ERROR.code;
}

/** GraphQL errors in responses, as the Prometheus plugin takes them; `operationName` bounds the names. */
function errorSeries(
  registry: Registry,
  operationName: ReturnType<typeof createLabelBudget>,
): NonNullable<PrometheusTracingPluginConfig['metrics']>['graphql_envelop_error_result'] {
  const errorCode = createLabelBudget(100);
  return createCounter({
    registry,
    counter: {
      name: 'pet_gateway_errors_total',
      help: 'GraphQL errors in responses, by extensions.code and the phase that raised them.',
      labelNames: ['operationName', 'code', 'phase'],
    },
    fillLabelsFn: (params, context) => ({
      operationName: operationName(params.operationName, 'anonymous'),
      code: errorCode(clientCode(params, context)),
      phase: params.errorPhase ?? 'unknown',
    }),
    // Errors in no response: a client gone before its answer is counted once, under status 499.
    shouldObserve: (_params, context) =>
      !(context as { request?: Request } | undefined)?.request?.signal.aborted,
  });
}

/** Uses of deprecated fields, by field and the client's self-declared name (bounded). */
function deprecatedFieldMetric(registry: Registry): Metrics['deprecatedUse'] {
  const clientName = createLabelBudget(100);
  const deprecated = new Counter({
    name: 'pet_gateway_deprecated_field_use_total',
    help: 'Operations that used a deprecated field, by field and graphql-client-name.',
    labelNames: ['field', 'client'],
    registers: [registry],
  });
  return (fields, name) => {
    for (const field of fields) deprecated.inc({ field, client: clientName(name, 'unknown') });
  };
}

/** Client connections the listener closed itself, by reason. */
function connectionMetric(registry: Registry): Metrics['connectionClosed'] {
  const connectionsClosed = new Counter({
    name: 'pet_gateway_client_connections_closed_total',
    help: 'Client connections the gateway closed itself: refused (at the cap or the address share, all busy), evicted (the oldest idle one, at the cap or the address share), timeout (request not in within its time; answered 408), slow_body (a request body under the minimum rate; 408), unread_body (a request body still arriving 5 s or 16 MiB after its answer, such as a 413), probe_only (a connection past the cap asked for more than /health or /readiness; 503), slow_reader (a stream whose client stopped reading), flood (a WebSocket over WS_MAX_MESSAGES_PER_SECOND; 1008), unauthenticated (a WebSocket whose connection_init had no usable key; 4403).',
    labelNames: ['reason'],
    registers: [registry],
  });
  return (reason) => connectionsClosed.inc({ reason });
}

/** Operations by what they cost (docs/cost.md): the estimate MAX_COST is compared with, and the actual. */
function costMetric(registry: Registry): Metrics['cost'] {
  const costs = new Histogram({
    name: 'pet_gateway_operation_cost',
    help: 'What GraphQL operations cost by the cost directives (COST_REPORT=on), by operation type and kind: estimated (before running, what MAX_COST refuses above) or actual (from what came back).',
    labelNames: ['operationType', 'kind'],
    buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
    registers: [registry],
  });
  return (operationType = 'unknown', cost) => {
    costs.observe({ operationType, kind: 'estimated' }, cost.estimated);
    if (cost.actual !== undefined) costs.observe({ operationType, kind: 'actual' }, cost.actual);
  };
}

/** Batched requests by their number of operations (each operation is counted with the others too). */
function batchMetric(registry: Registry): Metrics['batch'] {
  const sizes = new Histogram({
    name: 'pet_gateway_batch_operations',
    help: 'Operations per batched request (a JSON array of operations in one POST).',
    buckets: [1, 2, 3, 5, 10, 20, 50, 100],
    registers: [registry],
  });
  return (size) => sizes.observe(size);
}
