import type { IncomingMessage } from 'node:http';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import type { GraphQLError } from 'graphql';
import { getOperationAST, NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import { DEFAULT_LIMITS, type Limits } from '../config.ts';
import { type CompiledExecution, createCompiledExecution } from '../execution/compiled.ts';
import { compilePlan } from '../execution/plan.ts';
import { createLogger, useOperationLog, yogaLogger } from '../observability/logging.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Tracing } from '../observability/tracing.ts';
import { type Context, type ContextDeps, createContext } from '../schema/context.ts';
import { schema } from '../schema/index.ts';
import { useExactInt64Variables } from '../schema/int64-variables.ts';
import { subgraph } from '../schema/subgraph.ts';
import type { RedisHealth } from '../stores/redis.ts';
import type { DocumentStore } from '../stores/registered-documents.ts';
import type { ResponseCacheOptions } from '../upstream/cached-calls.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { useEndpoint } from './endpoints.ts';
import { asksForPage, useGraphiQLPage, useGraphiQLRefusal } from './graphiql/graphiql.ts';
import {
  type LaneContext,
  type Lanes,
  PER_ANSWER_HEADERS,
  type PreparedOperation,
} from './prepared-operations.ts';
import { useRequestBody } from './request/body.ts';
import { useCodedRequestErrors } from './request/errors.ts';
import { useOperationChoice } from './request/operation-choice.ts';
import { type PersistedDocuments, usePersistedDocuments } from './request/persisted-documents.ts';
import { useQueryParams } from './request/query-params.ts';
import { type RateLimit, useRateLimit } from './request/rate-limit.ts';
import { useCacheHeaders } from './response/cache-headers.ts';
import { corsPolicy } from './response/cors.ts';
import { type DeprecatedUse, useDeprecationNotices } from './response/deprecation-headers.ts';
import { useResponseCompression } from './response/response-compression.ts';

export interface GatewayOptions {
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
  /** A request's client address, for the log line. @default the socket's peer */
  clientAddress?: (req: IncomingMessage) => string;
  /** The shared Redis, for `/health` and `/readiness` to report on; undefined when not used. */
  redis?: RedisHealth;
  /**
   * Serve the schema as an Apollo Federation v2 subgraph (`_service`, `_entities`, `Pet @key`);
   * off, the public schema is exactly schema/schema.graphql. @default false
   */
  federation?: boolean;
}

export type Gateway = YogaServerInstance<LaneContext, Context>;

/**
 * Introspection is exempt from the depth limit (the standard query nests `ofType` deeply) but not
 * unbounded: GraphiQL's and codegen's queries reach depth 13 with fragments flattened.
 */
const MAX_INTROSPECTION_DEPTH = 15;

const EXAMPLE_QUERY = `# Animals on offer. Press the run button (or Ctrl-Enter).
query AvailablePets {
  pets(status: AVAILABLE, limit: 10) {
    id
    name
    categoryId
    status
  }
}
`;

/**
 * graphql-armor rejects with a code-less GraphQLError; its `onReject` hook is where each rejection
 * gets its documented code and a 400.
 */
function armorOptions(code: string) {
  return {
    exposeLimits: true,
    propagateOnRejection: true,
    onReject: [
      (_context: unknown, error: GraphQLError) => {
        // graphql-armor words every limit as a "Syntax Error:", which it is not.
        error.message = error.message.replace(/^Syntax Error: /, '');
        Object.assign(error.extensions, { code, http: { status: 400 } });
      },
    ],
  };
}

/** What a request's context is built from: the same for Yoga's lane and the fast lane. */
export function contextDeps(options: GatewayOptions): ContextDeps {
  const limits = options.limits ?? DEFAULT_LIMITS;
  return {
    upstream: options.upstream,
    maxCost: limits.maxCost,
    maxRepresentations: limits.maxRepresentations,
    now: options.now ?? (() => new Date()),
    ...(options.cache ? { cache: options.cache } : {}),
  };
}

/** Where a use of a deprecated field goes, whichever lane served it: the log and a metric. */
export function deprecatedUseReporter(logger: Logger, metrics: Metrics | undefined) {
  return (use: DeprecatedUse): void => {
    logger.info(use, 'deprecated field used');
    metrics?.deprecatedUse(use.fields, use.clientName);
  };
}

/**
 * Keeps what Yoga learned from a request the edge marked as a fast-lane candidate (see
 * `HandOff.toPrepare`): once its operation ran without errors and compiled, the fast lane serves it.
 */
function usePreparation(lanes: Lanes, compiled: CompiledExecution): Plugin {
  const ready = new WeakMap<Request, { key: string; operation: PreparedOperation }>();
  return {
    onExecute({ args }) {
      const { lane, request } = args.contextValue as LaneContext & { request?: Request };
      const keys = lane?.toPrepare;
      if (keys === undefined || request === undefined) return;
      return {
        onExecuteDone({ result }) {
          if (!('data' in result) || result.errors?.length || result.data == null) return;
          const query = compiled.compiledFor(args.document, args.operationName);
          const operation = getOperationAST(args.document, args.operationName);
          if (!query || !operation) return;
          ready.set(request, {
            key: keys.operation,
            operation: {
              compiled: query,
              plan: lanes.planning ? compilePlan(args.schema, args.document, args.operationName) : undefined,
              operationType: operation.operation,
              operationName: operation.name?.value,
            },
          });
        },
      };
    },
    // Last of all plugins, so every header Yoga and the other plugins set is on the response.
    onResponse({ request, response, serverContext }) {
      const prepared = ready.get(request);
      const keys = (serverContext as LaneContext).lane?.toPrepare;
      if (!prepared || !keys || response.status !== 200) return;
      const headers: string[] = [];
      response.headers.forEach((value, name) => {
        if (!PER_ANSWER_HEADERS.has(name)) headers.push(name, value);
      });
      lanes.headers.set(keys.headers, headers);
      lanes.prepared.set(prepared.key, prepared.operation);
    },
  };
}

/**
 * Builds the gateway: GraphQL (and GraphiQL) at `/graphql`, metrics at `/metrics` when given
 * (`/health` and `/readiness` are answered at the edge: edge/health.ts). Reads no environment and opens no port;
 * `main.ts` does both.
 */
export function createGateway(options: GatewayOptions, lanes?: Lanes): Gateway {
  const limits = options.limits ?? DEFAULT_LIMITS;
  // Built once, not per request: the fast lane builds its own from the same options.
  const deps = contextDeps(options);
  const logger = options.logger ?? createLogger('info');
  const { metrics, tracing } = options;
  const plugins: Plugin[] = [
    useRequestBody(limits.maxBodyBytes, (serverContext) => (serverContext as LaneContext).lane?.parsed),
    useQueryParams(),
    // Before every other onParams hook and the document limits: a refused request costs nothing more.
    ...(options.rateLimit ? [useRateLimit(options.rateLimit)] : []),
    maxTokensPlugin({ n: limits.maxTokens, ...armorOptions('TOKEN_LIMIT_EXCEEDED') }),
    maxDepthPlugin({
      n: limits.maxDepth,
      ignoreIntrospection: true,
      flattenFragments: true,
      ...armorOptions('DEPTH_LIMIT_EXCEEDED'),
    }),
    maxDepthPlugin({
      n: MAX_INTROSPECTION_DEPTH,
      ignoreIntrospection: false,
      flattenFragments: true,
      ...armorOptions('DEPTH_LIMIT_EXCEEDED'),
    }),
    // graphql-armor leaves `__typename` out of the count by default, so `{ a0: __typename … a999:
    // __typename }` passed any MAX_ALIASES: every alias counts here, whatever field it names.
    maxAliasesPlugin({ n: limits.maxAliases, allowList: [], ...armorOptions('ALIAS_LIMIT_EXCEEDED') }),
    maxDirectivesPlugin({ n: limits.maxDirectives, ...armorOptions('DIRECTIVE_LIMIT_EXCEEDED') }),
    useCodedRequestErrors(limits.maxDirectives),
    useExactInt64Variables(),
    useOperationChoice(),
    useDeprecationNotices({
      onUse: deprecatedUseReporter(logger, metrics),
    }),
    useOperationLog(logger, options.clientAddress),
    // The upstream deadline's timer ends with execution, not `timeoutMs` after it.
    {
      onExecute: () => ({ onExecuteDone: ({ args }) => (args.contextValue as unknown as Context).release() }),
    },
  ];
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
  // GraphiQL's assets are served by the gateway itself: no CDN, so it works offline. Not with only
  // persisted operations allowed: every document it sends, introspection included, would be refused.
  if (options.graphiql !== false && options.persistedOperations?.mode !== 'require') {
    plugins.push(
      useGraphiQLPage(
        '/graphql',
        {
          title: 'Animal store',
          defaultQuery: EXAMPLE_QUERY,
          headers: JSON.stringify({ Authorization: 'Bearer <your API key>' }),
        },
        options.graphiqlAuthorization === undefined
          ? undefined
          : { headers: JSON.stringify({ Authorization: options.graphiqlAuthorization }) },
      ),
    );
  } else {
    plugins.push(
      useGraphiQLRefusal(
        '/graphql',
        options.persistedOperations?.mode === 'require'
          ? "GraphiQL is not served here: with PERSISTED_OPERATIONS=require only the manifest's operations run, so every query GraphiQL sends would be refused. Use GraphiQL on a gateway with PERSISTED_OPERATIONS=allow or off and GRAPHIQL=on, or read schema/schema.graphql. Apps send their operations here by id, as POST application/json."
          : 'GraphiQL is off on this gateway (GRAPHIQL=off). To use it in a browser, start the gateway with GRAPHIQL=on (the default). GraphQL clients send queries here as POST application/json.',
      ),
    );
  }
  // Last, so the answer it compresses carries every header the plugins before it set.
  plugins.push(useResponseCompression());
  // After compression, whose Vary it replaces with the full list.
  plugins.push(useCacheHeaders(options.cache?.ttlMs));
  // After compression: it learns the headers of the answer as the client receives it.
  if (lanes) plugins.push(usePreparation(lanes, compiled));
  return createYoga<LaneContext, Context>({
    schema: options.federation ? subgraph().schema : schema,
    plugins,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/health',
    landingPage: false,
    batching: false,
    // Our POST parser (yoga/request/body.ts) already caps the body while reading it; Yoga's own cap
    // would pipe every body through a second TransformStream (a pipeline and an AbortController
    // per request, ~3% of CPU in the profile) for nothing.
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
    context: ({ request, lane, params }) =>
      // A request the fast lane already executed keeps the context it ran with (its loaders, the
      // upstream calls it counted, the deprecations it saw).
      lane?.executed?.context ||
      createContext(request.headers.get('authorization') ?? undefined, deps, params.variables),
  });
}
