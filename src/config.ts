import { availableParallelism } from 'node:os';
import {
  boolean,
  ConfigError,
  httpUrl,
  integer,
  MIN_SECRET_LENGTH,
  nonEmpty,
  oneOf,
  origins,
} from './config/env-values.ts';
import { type LiveSettings, liveSettings } from './config/live.ts';
import { mcpEnabled, mcpStateSecret } from './config/mcp.ts';
import { nameMaxLength } from './config/name-limit.ts';
import { trustedProxies } from './config/trusted-proxies.ts';
import { upstreamUrl } from './config/upstream-url.ts';
import { type WebSocketSettings, webSocketSettings } from './config/websocket.ts';

/** Configuration, parsed and validated once at start-up. Only `main.ts` passes `process.env` in. */
export interface Config {
  /** @default 4000 */
  readonly port: number;
  /**
   * @default '127.0.0.1' with the embedded reference service (its key is in the GraphiQL page), else
   * '0.0.0.0'
   */
  readonly host: string;
  /** Base URL of the REST v1 service (path ends in `/v1`); undefined → embed the reference service. */
  readonly upstreamUrl: URL | undefined;
  /** Whole-call deadline for one upstream request, body included. @default 5000 */
  readonly upstreamTimeoutMs: number;
  /** Keep-alive connections to the upstream origin. @default 64 */
  readonly upstreamConnections: number;
  /**
   * Client connections held at once (see edge/listener.ts). @default the file-descriptor limit less
   * two per upstream connection and 64 for Redis, logs and the database; at least 32
   */
  readonly maxConnections: number;
  /**
   * Client connections one address may hold (a trusted proxy has no share: it carries many
   * clients). @default a quarter of maxConnections, at least 8
   */
  readonly maxConnectionsPerAddress: number;
  /**
   * Peers whose `X-Forwarded-For` / `Forwarded` names the client (addresses and CIDR ranges):
   * the operator's proxies. @default [] (headers never read)
   */
  readonly trustedProxies: readonly string[];
  /** Bytes of log lines waiting for a slow stdout reader before lines are dropped. @default 4 MiB */
  readonly logBufferBytes: number;
  /** One upstream GET for one caller's identical GETs in flight at once. @default true */
  readonly upstreamCoalesce: boolean;
  /**
   * Browser origins allowed to call the endpoint (CORS); `['*']` allows any but `null`, which is
   * allowed only when listed. @default ['*']
   */
  readonly corsOrigins: readonly string[];
  /** Serve GraphiQL to browsers at /graphql. @default true (false when persistedOperations is require) */
  readonly graphiql: boolean;
  /** Answer introspection. @default true */
  readonly introspection: boolean;
  /** Trusted documents: off, allow (ids or text), require (ids only). @default 'off' */
  readonly persistedOperations: 'off' | 'allow' | 'require';
  /** The manifest (codegen's persisted-documents.json); required unless persistedOperations is off. */
  readonly persistedOperationsFile: string | undefined;
  /**
   * Automatic persisted queries (Apollo's APQ protocol) and where registered documents live;
   * undefined = off. @default { store: 'memory', maxDocuments: 1000, maxBytes: 1048576 }, off with
   * persistedOperations require
   */
  readonly apq:
    | { readonly store: 'memory' | 'redis'; readonly maxDocuments: number; readonly maxBytes: number }
    | undefined;
  /** pino level: fatal, error, warn, info, debug, trace or silent. @default 'info' */
  readonly logLevel: string;
  /** Log lines as JSON, as short lines for people, or `auto`: short in a terminal, else JSON. @default 'auto' */
  readonly logFormat: 'auto' | 'json' | 'pretty';
  /** Serve Prometheus metrics at /metrics. @default true */
  readonly metrics: boolean;
  /** Serve prepared operations in the fast lane (off: everything through Yoga). @default true */
  readonly fastLane: boolean;
  /**
   * In the fast lane, answer operations whose every field can be planned from a compiled plan of
   * upstream calls, without GraphQL execution (off: compiled execution for all). @default true
   */
  readonly plans: boolean;
  /** Serve the schema as an Apollo Federation v2 subgraph (`_service`, `_entities`). @default false */
  readonly federation: boolean;
  /** Live subscriptions (src/config/live.ts); undefined with LIVE=off. */
  readonly live: LiveSettings | undefined;
  /** What one WebSocket may hold and send (src/config/websocket.ts). */
  readonly webSocket: WebSocketSettings;
  /** The MCP endpoint at `/mcp` for assistants (src/config/mcp.ts). @default true */
  readonly mcp: boolean;
  /** MCP_STATE_SECRET: signs a write tool's question to its user (src/config/mcp.ts). */
  readonly mcpStateSecret: string | undefined;
  /** OTLP/HTTP collector base URL; tracing is off without it. */
  readonly otlpEndpoint: string | undefined;
  /** Limits on what a client may send; see README "Limits and failure behaviour". */
  readonly limits: Limits;
  /** Per-caller cache of `pets`/`pet` answers: off, this process's memory, or Redis. @default 'off' */
  readonly responseCache: 'off' | 'memory' | 'redis';
  /** How long a cached answer is reused. @default 2000 */
  readonly responseCacheTtlMs: number;
  /** Bytes the memory response cache may hold (Redis's bound is its own `maxmemory`). @default 64 MiB */
  readonly responseCacheMaxBytes: number;
  /** Requests per API key per minute, and where the counts live; undefined = no limit. @default undefined */
  readonly rateLimit:
    | {
        readonly perMinute: number;
        readonly store: 'memory' | 'redis';
        /** Keys the upstream refused (or is checking) per client address per minute. @default 60 */
        readonly refusedKeysPerMinute: number;
      }
    | undefined;
  /**
   * Points each caller may spend a minute, restored continuously, and where the buckets live (the
   * rate limit's store); undefined = no budget. @default undefined
   */
  readonly costBudget: { readonly perMinute: number; readonly store: 'memory' | 'redis' } | undefined;
  /** Redis for `responseCache: 'redis'`, a rate limit or APQ store in Redis; ignored otherwise. */
  readonly redisUrl: URL | undefined;
  /**
   * The secret of the HMAC that names callers in Redis keys; the same on every instance sharing a
   * Redis. Required with the response cache or the rate limit in Redis; undefined → a random
   * secret per process (keys that never leave it).
   */
  readonly redisKeySecret: string | undefined;
  /** Embedded reference service only. @default 'data/petstore.db' */
  readonly petstoreDb: string;
  /** Embedded reference service only: a key it always accepts. */
  readonly petstoreApiKey: string | undefined;
  /**
   * Worker processes sharing the port (node:cluster); `WORKERS=auto` is one per core. 1 runs no
   * cluster at all. @default 1
   */
  readonly workers: number;
}

export interface Limits {
  /** Selection depth of an operation (introspection is bounded separately). @default 5 */
  readonly maxDepth: number;
  /** Aliases in one operation. @default 10 */
  readonly maxAliases: number;
  /** Directives in one operation. @default 10 */
  readonly maxDirectives: number;
  /** Lexical tokens in one document. @default 800 */
  readonly maxTokens: number;
  /** Bytes of one request body. @default 65536 */
  readonly maxBodyBytes: number;
  /** An operation's estimated cost, by the schema's cost directives (execution/cost.ts). @default 1000 */
  readonly maxCost: number;
  /** `enforce` refuses an operation above `maxCost`; `measure` only reports its cost. @default enforce */
  readonly costMode?: 'enforce' | 'measure';
  /** Whether answers carry their cost (`extensions.cost`, headers: policy/cost.ts). @default false */
  readonly costReport?: boolean;
  /** Representations in one `_entities` field (FEDERATION=on). @default 100 */
  readonly maxRepresentations: number;
  /** Operations in one batched request (a JSON array); 1 turns batching off. @default 10 */
  readonly maxBatchOperations: number;
  /** Code points of a trimmed `createPet` name (src/config/name-limit.ts). @default undefined: none */
  readonly nameMaxLength?: number | undefined;
}

/** Defaults at or below graphql-armor's and Apollo Router's. */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxDepth: 5,
  maxAliases: 10,
  maxDirectives: 10,
  maxTokens: 800,
  maxBodyBytes: 64 * 1024,
  maxCost: 1000,
  maxRepresentations: 100,
  maxBatchOperations: 10,
});

export interface ProcessLimits {
  /** The soft limit on open file descriptors (`ulimit -n`). @default 1024 */
  fileDescriptors?: number;
}

/** File descriptors kept out of the client cap for Redis, log output, the SQLite file and spares. */
const RESERVED_DESCRIPTORS = 64;

/** Parses the environment into a frozen Config; throws a one-line ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined>, limits: ProcessLimits = {}): Config {
  const upstreamConnections = integer(env, 'UPSTREAM_CONNECTIONS', 64, 1, 1024);
  // Two per upstream connection: with the embedded reference service, both ends are this process's.
  const fdBudget = (limits.fileDescriptors ?? 1024) - 2 * upstreamConnections - RESERVED_DESCRIPTORS;
  const persistedSettings = persisted(env);
  const maxConnections = integer(env, 'MAX_CONNECTIONS', Math.max(32, fdBudget), 1, 1_000_000);
  const upstream = upstreamUrl(env);
  const live = liveSettings(env);
  return Object.freeze({
    port: integer(env, 'PORT', 4000, 0, 65535),
    // The embedded default prints its key and prefills it in GraphiQL: this machine only, unless
    // HOST says otherwise (the image sets 0.0.0.0).
    host: nonEmpty(env, 'HOST') ?? (upstream === undefined ? '127.0.0.1' : '0.0.0.0'),
    upstreamUrl: upstream,
    upstreamTimeoutMs: integer(env, 'UPSTREAM_TIMEOUT_MS', 5000, 1, 120_000),
    upstreamConnections,
    maxConnections,
    trustedProxies: trustedProxies(env),
    logBufferBytes: integer(env, 'LOG_BUFFER_BYTES', 4 * 1024 * 1024, 65_536, 1024 * 1024 * 1024),
    maxConnectionsPerAddress: integer(
      env,
      'MAX_CONNECTIONS_PER_ADDRESS',
      Math.max(8, Math.floor(maxConnections / 4)),
      1,
      1_000_000,
    ),
    upstreamCoalesce: boolean(env, 'UPSTREAM_COALESCE', true),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['auto', 'json', 'pretty'], 'auto'),
    metrics: boolean(env, 'METRICS', true),
    fastLane: boolean(env, 'FAST_LANE', true),
    plans: boolean(env, 'PLANS', true),
    federation: boolean(env, 'FEDERATION', false),
    live,
    webSocket: webSocketSettings(env),
    mcp: mcpEnabled(env),
    mcpStateSecret: mcpStateSecret(env),
    otlpEndpoint: httpUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    introspection: boolean(env, 'INTROSPECTION', true),
    ...persistedSettings,
    ...redisUses(env, persistedSettings.apq, live),
    limits: Object.freeze({
      maxDepth: integer(env, 'MAX_DEPTH', DEFAULT_LIMITS.maxDepth, 1, 100),
      maxAliases: integer(env, 'MAX_ALIASES', DEFAULT_LIMITS.maxAliases, 0, 1000),
      maxDirectives: integer(env, 'MAX_DIRECTIVES', DEFAULT_LIMITS.maxDirectives, 0, 1000),
      maxTokens: integer(env, 'MAX_TOKENS', DEFAULT_LIMITS.maxTokens, 50, 100_000),
      maxBodyBytes: integer(env, 'MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes, 1024, 10 * 1024 * 1024),
      maxCost: integer(env, 'MAX_COST', DEFAULT_LIMITS.maxCost, 1, 1_000_000),
      costMode: oneOf(env, 'COST_MODE', ['enforce', 'measure'], 'enforce'),
      // A budget's answers say what is left of it, so they carry their cost.
      costReport: boolean(env, 'COST_REPORT', false) || costBudgetOf(env, 'memory') !== undefined,
      maxRepresentations: integer(env, 'MAX_REPRESENTATIONS', DEFAULT_LIMITS.maxRepresentations, 1, 100_000),
      maxBatchOperations: integer(env, 'MAX_BATCH_OPERATIONS', DEFAULT_LIMITS.maxBatchOperations, 1, 100),
      nameMaxLength: nameMaxLength(env),
    }),
    petstoreDb: nonEmpty(env, 'PETSTORE_DB') ?? 'data/petstore.db',
    petstoreApiKey: nonEmpty(env, 'PETSTORE_API_KEY'),
    workers: workers(env),
  });
}

/** The most WORKERS may ask for: past this, processes only compete for the same cores. */
const MAX_WORKERS = 256;

function workers(env: Record<string, string | undefined>): number {
  if (nonEmpty(env, 'WORKERS')?.toLowerCase() === 'auto')
    return Math.min(availableParallelism(), MAX_WORKERS);
  try {
    return integer(env, 'WORKERS', 1, 1, MAX_WORKERS);
  } catch {
    throw new ConfigError(
      `WORKERS must be auto or an integer from 1 to ${MAX_WORKERS}, got "${nonEmpty(env, 'WORKERS')}"`,
    );
  }
}

function persisted(env: Record<string, string | undefined>) {
  const mode = oneOf(env, 'PERSISTED_OPERATIONS', ['off', 'allow', 'require'], 'off');
  const file = nonEmpty(env, 'PERSISTED_OPERATIONS_FILE');
  if (mode !== 'off' && file === undefined) {
    throw new ConfigError(
      `PERSISTED_OPERATIONS=${mode} needs PERSISTED_OPERATIONS_FILE (a persisted-documents.json)`,
    );
  }
  // Only the manifest runs in require mode: GraphiQL's documents would all be refused, and a
  // caller registering documents would defeat the mode.
  const graphiql = boolean(env, 'GRAPHIQL', mode !== 'require');
  if (mode === 'require' && graphiql) {
    throw new ConfigError(
      'GRAPHIQL=on cannot serve anything with PERSISTED_OPERATIONS=require (only manifest documents run)',
    );
  }
  const apqOn = boolean(env, 'APQ', mode !== 'require');
  if (mode === 'require' && apqOn) {
    throw new ConfigError(
      'APQ=on cannot be used with PERSISTED_OPERATIONS=require (only manifest documents run)',
    );
  }
  const apqStore = oneOf(env, 'APQ_STORE', ['memory', 'redis'], 'memory');
  const apq = apqOn
    ? Object.freeze({
        store: apqStore,
        maxDocuments: integer(env, 'APQ_MAX_DOCUMENTS', 1000, 1, 1_000_000),
        maxBytes: integer(env, 'APQ_MAX_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
      })
    : undefined;
  return {
    persistedOperations: mode,
    persistedOperationsFile: file,
    graphiql,
    apq,
  };
}

function redisUses(
  env: Record<string, string | undefined>,
  apq: Config['apq'],
  live: LiveSettings | undefined,
): Pick<
  Config,
  | 'responseCache'
  | 'responseCacheTtlMs'
  | 'responseCacheMaxBytes'
  | 'rateLimit'
  | 'costBudget'
  | 'redisUrl'
  | 'redisKeySecret'
> {
  const mode = oneOf(env, 'RESPONSE_CACHE', ['off', 'memory', 'redis'], 'off');
  const ttlMs = integer(env, 'RESPONSE_CACHE_TTL_MS', 2000, 1, 60_000);
  const maxBytes = integer(env, 'RESPONSE_CACHE_MAX_BYTES', 64 * 1024 * 1024, 1024 * 1024, 2 ** 32);
  const perMinute = nonEmpty(env, 'RATE_LIMIT_PER_MINUTE')?.toLowerCase();
  const store = oneOf(env, 'RATE_LIMIT_STORE', ['memory', 'redis'], 'memory');
  // Its meaning changed (it counted keys not accepted yet; new valid keys from one NAT were
  // refused): a silent no-op would leave an operator believing it still applies.
  if (nonEmpty(env, 'RATE_LIMIT_NEW_KEYS_PER_MINUTE') !== undefined) {
    throw new ConfigError(
      'RATE_LIMIT_NEW_KEYS_PER_MINUTE is now RATE_LIMIT_REFUSED_KEYS_PER_MINUTE: keys the upstream refused per client address per minute',
    );
  }
  const rateLimit =
    perMinute === undefined || perMinute === 'off'
      ? undefined
      : Object.freeze({
          perMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 0, 1, 1_000_000),
          store,
          refusedKeysPerMinute: integer(env, 'RATE_LIMIT_REFUSED_KEYS_PER_MINUTE', 60, 1, 1_000_000),
        });
  const costBudget = costBudgetOf(env, store);
  // REDIS_URL alone turns nothing on: caching is a choice (answers may be up to a TTL old), and
  // platforms often inject REDIS_URL for other uses.
  const needs = [
    ...(mode === 'redis' ? ['RESPONSE_CACHE=redis'] : []),
    ...(rateLimit?.store === 'redis' || costBudget?.store === 'redis' ? ['RATE_LIMIT_STORE=redis'] : []),
    ...(apq?.store === 'redis' ? ['APQ_STORE=redis'] : []),
    ...(live?.store === 'redis' ? ['LIVE_STORE=redis'] : []),
  ];
  const settings = {
    responseCache: mode,
    responseCacheTtlMs: ttlMs,
    responseCacheMaxBytes: maxBytes,
    rateLimit,
    costBudget,
  } as const;
  // Keys that never leave the process need no shared secret: REDIS_KEY_SECRET is then unused.
  if (needs.length === 0) return { ...settings, redisUrl: undefined, redisKeySecret: undefined };
  const raw = nonEmpty(env, 'REDIS_URL');
  if (raw === undefined) throw new ConfigError(`${needs[0]} needs REDIS_URL (redis://host:6379)`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The value may hold a password: never echo it.
    throw new ConfigError('REDIS_URL must be an absolute redis:// or rediss:// URL');
  }
  if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
    throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL with a host, got "${url.protocol}"`);
  }
  return { ...settings, redisUrl: url, redisKeySecret: redisKeySecret(env, needs) };
}

/**
 * REDIS_KEY_SECRET, required when callers' keys go to Redis (APQ keys documents by their own hash,
 * no caller). Without it every instance would make its own secret: each would count its own rate
 * limit (N instances, N times the limit) and cache under keys no other reads, silently; so start-up
 * refuses instead. The value is never echoed.
 */
function redisKeySecret(env: Record<string, string | undefined>, needs: string[]): string | undefined {
  const secret = nonEmpty(env, 'REDIS_KEY_SECRET');
  const keyedByCaller = needs.filter((need) => need !== 'APQ_STORE=redis');
  if (secret === undefined && keyedByCaller.length > 0) {
    throw new ConfigError(
      `${keyedByCaller[0]} needs REDIS_KEY_SECRET, the same on every instance sharing the Redis (at least ${MIN_SECRET_LENGTH} characters, e.g. openssl rand -hex 32)`,
    );
  }
  if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      `REDIS_KEY_SECRET must be at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32), got ${secret.length}`,
    );
  }
  return secret;
}

/** COST_BUDGET_PER_MINUTE: points per caller a minute; unset or `off`, no budget. */
function costBudgetOf(
  env: Record<string, string | undefined>,
  store: 'memory' | 'redis',
): Config['costBudget'] {
  const raw = nonEmpty(env, 'COST_BUDGET_PER_MINUTE')?.toLowerCase();
  if (raw === undefined || raw === 'off') return undefined;
  return Object.freeze({ perMinute: integer(env, 'COST_BUDGET_PER_MINUTE', 0, 1, 1_000_000_000), store });
}
