import type { IncomingMessage } from 'node:http';
import { type GraphQLSchema, NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, isAsyncIterable, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import { DEFAULT_LIMITS, type Limits } from '../config.ts';
import { createCompiledExecution } from '../execution/compiled.ts';
import type { Watches } from '../live/watches.ts';
import { createLogger, yogaLogger } from '../observability/logging.ts';
import type { Metrics } from '../observability/metrics.ts';
import { useOperationLog } from '../observability/operation-log.ts';
import type { Tracing } from '../observability/tracing.ts';
import { cancelWhenClientGoes } from '../policy/client-gone.ts';
import { corsPolicy } from '../policy/cors.ts';
import type { CostBudget } from '../policy/cost-budget.ts';
import { deprecatedUseReporter } from '../policy/deprecation-headers.ts';
import type { LaneContext } from '../policy/hand-off.ts';
import type { Lanes } from '../policy/prepared-operations.ts';
import type { RateLimit } from '../policy/rate-limit.ts';
import { type Context, type ContextDeps, contextDepsOf, createContext } from '../schema/context.ts';
import { schema } from '../schema/index.ts';
import { refuseOversizedEntities, subgraph } from '../schema/subgraph.ts';
import type { RedisHealth } from '../stores/redis.ts';
import type { DocumentStore } from '../stores/registered-documents.ts';
import type { ResponseCacheOptions } from '../upstream/cached-calls.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { useEndpoint } from './endpoints.ts';
import { asksForPage, useGraphiQLPage, useGraphiQLRefusal } from './graphiql/graphiql.ts';
import { usePreparation } from './preparation.ts';
import { type Batches, createBatches } from './request/batches.ts';
import { useRequestBody } from './request/body.ts';
import { useCost } from './request/cost.ts';
import { useOperationChoice } from './request/operation-choice.ts';
import { type PersistedDocuments, usePersistedDocuments } from './request/persisted-documents.ts';
import { useQueryParams } from './request/query-params.ts';
import { useRateLimit } from './request/rate-limit.ts';
import { useAcceptableForms } from './response/accept.ts';
import { useCacheHeaders } from './response/cache-headers.ts';
import { useResponseCompression } from './response/compression.ts';
import { useDeprecationNotices } from './response/deprecation.ts';
import { endingWithLastPart, useIncrementalDelivery } from './response/incremental.ts';
import { useLiveQueries } from './response/live-queries.ts';
import { useValidationByShape } from './validation/by-shape.ts';
import { useDocumentCache } from './validation/document-cache.ts';
import { useExactInt64Variables } from './validation/int64-variables.ts';
import { useDocumentLimits } from './validation/limits.ts';

export interface YogaServerOptions {
  /** The REST v1 client; the gateway never creates connections of its own. */
  upstream: UpstreamClient;
  /** @default DEFAULT_LIMITS */
  limits?: Limits;
  /**
   * Prefilled in GraphiQL's header editor, e.g. the embedded service's development key: only for a
   * page asked for at `localhost` or an IP address (see useGraphiQLPage).
   */
  graphiqlAuthorization?: string;
  /** Browser origins allowed by CORS; `['*']` for any. @default ['*'] */
  corsOrigins?: readonly string[];
  /** Serve GraphiQL at `/graphql` to browsers. @default true */
  graphiql?: boolean;
  /** Answer introspection queries. @default true */
  introspection?: boolean;
  /** Trusted documents; undefined = off. */
  persistedOperations?: { mode: 'allow' | 'require'; documents: PersistedDocuments };
  /**
   * Automatic persisted queries (Apollo's APQ protocol): where registered documents live;
   * undefined = APQ off (hashes are answered PERSISTED_QUERY_NOT_SUPPORTED). Never used when
   * persistedOperations.mode is require.
   */
  automaticPersistedQueries?: DocumentStore;
  /** The clock, injectable for the sunset. @default () => new Date() */
  now?: () => Date;
  /** JSON logs: one line per operation, deprecated-field use, Yoga's own. @default pino at info on stdout */
  logger?: Logger;
  /** Prometheus metrics served at /metrics; undefined = no /metrics. */
  metrics?: Metrics;
  /** OpenTelemetry spans; undefined = off. */
  tracing?: Tracing;
  /** Per-caller response cache for `pets`/`pet` (see README "Response cache"); undefined = off. */
  cache?: ResponseCacheOptions;
  /** Requests per API key per minute, checked before anything runs; undefined = no limit. */
  rateLimit?: RateLimit;
  /** COST_BUDGET_PER_MINUTE: each caller's budget in points (policy/cost-budget.ts). */
  costBudget?: CostBudget;
  /** A request's client address, for the log line. @default the socket's peer */
  clientAddress?: (req: IncomingMessage) => string;
  /** The shared Redis, for `/health` and `/readiness` to report on; undefined when not used. */
  redis?: RedisHealth;
  /** Live lists for `subscription { pets }`; undefined: subscriptions are refused (LIVE=off). */
  live?: Watches;
  /**
   * Serve the schema as an Apollo Federation v2 subgraph (`_service`, `_entities`, `Pet @key`);
   * off, the public schema is exactly schema/schema.graphql. @default false
   */
  federation?: boolean;
  /**
   * The schema served instead of the public one (or the subgraph's): the public schema with fields
   * of a test's own, as test/upstream/writes.test.ts adds a mutation. @default the public schema
   */
  schema?: GraphQLSchema;
}

export type YogaServer = YogaServerInstance<LaneContext, Context>;

/**
 * GraphiQL's first query, in short lines: at 1,400 px wide, beside the explorer and the answer, the
 * editor shows about 36 characters, and a longer line is cut mid-word. `limit` is left at its
 * default; the explorer beside it offers it.
 */
const EXAMPLE_QUERY = `# Animals on offer.
# Press run (or Ctrl-Enter).
query AvailablePets {
  pets(status: AVAILABLE) {
    id
    name
    categoryId
    status
  }
}
`;

/**
 * GraphiQL at `/graphql` for browsers, its assets served by the gateway itself: no CDN, so it works
 * offline. Not with only persisted operations allowed: every document it sends, introspection
 * included, would be refused; a browser is told why instead.
 */
function useGraphiQL(options: YogaServerOptions): Plugin {
  if (options.graphiql !== false && options.persistedOperations?.mode !== 'require') {
    return useGraphiQLPage(
      '/graphql',
      {
        title: 'Animal store',
        defaultQuery: EXAMPLE_QUERY,
        headers: JSON.stringify({ Authorization: 'Bearer <your API key>' }),
      },
      options.graphiqlAuthorization === undefined
        ? undefined
        : { headers: JSON.stringify({ Authorization: options.graphiqlAuthorization }) },
    );
  }
  return useGraphiQLRefusal(
    '/graphql',
    options.persistedOperations?.mode === 'require'
      ? "GraphiQL is not served here: with PERSISTED_OPERATIONS=require only the manifest's operations run, so every query GraphiQL sends would be refused. Use GraphiQL on a gateway with PERSISTED_OPERATIONS=allow or off and GRAPHIQL=on, or read schema/schema.graphql. Apps send their operations here by id, as POST application/json."
      : 'GraphiQL is off on this gateway (GRAPHIQL=off). To use it in a browser, start the gateway with GRAPHIQL=on (the default). GraphQL clients send queries here as POST application/json.',
  );
}

/**
 * The plugins of a request's own phases, in the order they run: the body and its batches, the
 * forms the answer may take, the query string, the rate limit, the document limits, operation
 * choice, incremental delivery, deprecation notices, cost, live queries, the log line, and the end
 * of the upstream deadline.
 */
function requestPlugins(
  options: YogaServerOptions,
  limits: Limits,
  logger: Logger,
  batches: Batches,
  deps: ContextDeps,
): Plugin[] {
  const { metrics } = options;
  return [
    batches.plugin,
    useRequestBody(
      limits.maxBodyBytes,
      limits.maxBatchOperations,
      (serverContext) => (serverContext as LaneContext).lane?.parsed,
    ),
    // After the body cap's check of a declared length, before anything else is read or run.
    useAcceptableForms(),
    useQueryParams(),
    // Before every other onParams hook and the document limits: a refused request costs nothing more.
    ...(options.rateLimit ? [useRateLimit(options.rateLimit, batches.entryOf)] : []),
    ...useDocumentLimits(limits),
    useExactInt64Variables(),
    useOperationChoice(options.live !== undefined),
    ...useIncrementalDelivery(batches),
    useDeprecationNotices({
      onUse: deprecatedUseReporter(logger, metrics),
    }),
    // After deprecation notices, so an answer's extensions read `deprecations` then `cost`.
    useCost(limits.costReport === true, {
      ...(options.federation ? { before: refuseOversizedEntities } : {}),
      ...(options.costBudget ? { budget: options.costBudget } : {}),
      batchEntryOf: batches.entryOf,
    }),
    // After every plugin that may refuse the request: a refused live query opens no watch.
    useLiveQueries(deps),
    // Before the log line and metrics: they read the status a 304 sets.
    useCacheHeaders(options.cache?.ttlMs),
    useOperationLog(logger, options.clientAddress, batches.entryOf, options.metrics),
    // The upstream deadline's timer ends with execution, not `timeoutMs` after it: for an answer in
    // parts, with its last part.
    {
      onExecute: () => ({
        onExecuteDone: ({ args, result, setResult }) => {
          const context = args.contextValue as unknown as Context;
          if (isAsyncIterable(result)) setResult(endingWithLastPart(result, context));
          else context.release();
        },
      }),
    },
  ];
}

/**
 * Builds the gateway: GraphQL (and GraphiQL) at `/graphql`, metrics at `/metrics` when given
 * (`/health` and `/readiness` are answered at the edge: edge/health.ts). Reads no environment and opens no port;
 * `main.ts` does both.
 */
export function createYogaServer(options: YogaServerOptions, lanes?: Lanes): YogaServer {
  const limits = options.limits ?? DEFAULT_LIMITS;
  // Built once, not per request: the fast lane builds its own from the same options.
  const deps = contextDepsOf(options);
  const logger = options.logger ?? createLogger('info');
  const { metrics, tracing } = options;
  const batches = createBatches(options.persistedOperations?.documents, metrics?.batch);
  const plugins = requestPlugins(options, limits, logger, batches, deps);
  // Tracing first, so its span wraps the whole execution; metrics serve /metrics.
  if (tracing) plugins.unshift(tracing.plugin);
  // Before tracing: it wraps whatever execute function is set when its own hook runs.
  const compiled = createCompiledExecution(
    lanes && ((contextValue) => (contextValue as LaneContext).lane?.executed?.result),
  );
  plugins.unshift(compiled.plugin);
  if (metrics) plugins.push(metrics.plugin, useEndpoint('/metrics', metrics.respond));
  if (options.introspection === false) {
    plugins.push({
      onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
    });
  }
  plugins.push(
    usePersistedDocuments({
      mode: options.persistedOperations?.mode ?? 'off',
      ...(options.persistedOperations ? { documents: options.persistedOperations.documents } : {}),
      ...(options.automaticPersistedQueries ? { store: options.automaticPersistedQueries } : {}),
    }),
  );
  plugins.push(useGraphiQL(options));
  // Last, so the answer it compresses carries every header the plugins before it set.
  plugins.push(useResponseCompression());
  // After compression: it learns the headers of the answer as the client receives it.
  if (lanes) plugins.push(usePreparation(lanes, compiled, batches.entryOf));
  // Last: they answer for the validation rules every plugin before them added.
  plugins.push(useValidationByShape(), useDocumentCache());
  return createYoga<LaneContext, Context>({
    schema: options.schema ?? (options.federation ? subgraph().schema : schema),
    plugins,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/health',
    landingPage: false,
    // Replaced by useDocumentCache: Yoga's kept each refusal with the request that first sent it.
    parserAndValidationCache: false,
    // The bound is yoga/request/body.ts's, which names MAX_BATCH_OPERATIONS in its refusal.
    batching: limits.maxBatchOperations > 1 ? { limit: limits.maxBatchOperations } : false,
    // Our POST parser (yoga/request/body.ts) already caps the body while reading it; Yoga's own cap
    // would pipe every body through a second TransformStream (a pipeline and an AbortController
    // per request) for nothing.
    maxRequestBodySize: false,
    cors: corsPolicy(options.corsOrigins ?? ['*'], (request) => asksForPage(request, '/graphql')),
    // Unexpected errors are masked; GraphQLErrors we raise on purpose (the gateway's codes and the
    // one upstream mapping table in schema/errors.ts) pass through.
    maskedErrors: true,
    logging: yogaLogger(logger),
    // `documentId` is the GraphQL-over-HTTP name for a persisted document's id.
    extraParamNames: ['documentId'],
    // Served by useGraphiQLPage (rendered and compressed once, cached by browsers).
    graphiql: false,
    context: ({ request, lane, res }) => {
      // A request the fast lane already executed keeps the context it ran with (its loaders, the
      // upstream calls it counted, the deprecations it saw), and the fast lane's watch on its client.
      if (lane?.executed) return lane.executed.context;
      if (lane?.ranOn) return lane.ranOn;
      const context = createContext(
        request.headers.get('authorization') ?? undefined,
        deps,
        batches.shareOf(request),
      );
      if (res) cancelWhenClientGoes(res, context.loaders);
      return context;
    },
  });
}
