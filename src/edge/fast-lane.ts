import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import type { Logger } from 'pino';
import { runPlan } from '../execution/run-plan.ts';
import { logOperation, type OperationRecord, requestIdOf } from '../observability/logging.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Tracing } from '../observability/tracing.ts';
import { type Context, type ContextDeps, createContext } from '../schema/context.ts';
import {
  type HandOff,
  headersKey,
  type Lanes,
  operationKey,
  type PreparedOperation,
} from '../yoga/prepared-operations.ts';
import { parseQueryParams, type QueryParams } from '../yoga/request/query-params.ts';
import type { RateLimit } from '../yoga/request/rate-limit.ts';
import { cacheControl } from '../yoga/response/cache-headers.ts';
import { chooseEncoding, encode } from '../yoga/response/compression.ts';
import {
  clientIdentity,
  type DeprecatedUse,
  deprecationHeaders,
} from '../yoga/response/deprecation-headers.ts';

/**
 * Yoga's node handler: the server of record, for every request the fast lane does not answer; what
 * the fast lane learned about the request goes with it, in Yoga's server context.
 */
export type YogaHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  ...context: Array<{ lane: HandOff }>
) => unknown;

export interface FastLaneOptions {
  lanes: Lanes;
  yoga: YogaHandler;
  context: ContextDeps;
  maxBodyBytes: number;
  logger: Logger;
  metrics?: Metrics;
  tracing?: Tracing;
  /** The per-key limit, consulted before execution; Yoga words a refusal. */
  rateLimit?: RateLimit;
  /** A request's client address, for the log line. */
  clientAddress: (req: IncomingMessage) => string;
  /** `max-age` of a successful query's answer (the response cache's TTL in seconds); 0: none. */
  cacheMaxAgeSeconds: number;
  onDeprecatedUse: (use: DeprecatedUse) => void;
}

const JSON_MEDIA_TYPES: ReadonlySet<string | undefined> = new Set([
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
]);

/** Body keys the fast lane understands; anything else goes to Yoga. */
const BODY_KEYS: ReadonlySet<string> = new Set([
  'query',
  'operationName',
  'variables',
  'documentId',
  'extensions',
]);
/**
 * Extensions the fast lane understands: an APQ hash sent alone (registration, with the text, is
 * Yoga's), and Apollo Client 4's `clientLibrary`, which nothing in the gateway reads.
 */
const EXTENSION_KEYS: ReadonlySet<string> = new Set(['persistedQuery', 'clientLibrary']);

/**
 * The fast lane: serves operations Yoga has already prepared (see prepared-operations.ts) without
 * Yoga's fetch-API adapter, envelop pipeline or result processing. It does only what is left per
 * request: read the capped body (or a GET's query string: queries only), find the prepared
 * operation, build the context, execute compiled, and write what Yoga would have written (same
 * status, body bytes and headers), log the same line and count the same metrics. Whatever is not the plain case goes to Yoga, with the body it read:
 * unusual headers, unknown documents (Yoga may prepare them), and any result with errors (Yoga
 * answers from the result already computed, so no upstream call is made twice).
 */
export function createFastLane(
  options: FastLaneOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const getKey = plainGet(req);
    if (getKey !== undefined) {
      // Yoga reads a GET's parameters from the query string itself (its body parser reads `parsed`
      // for POSTs only).
      const toYoga = (handOff?: HandOff) => handOver(req, res, undefined, options, handOff);
      serve(req, res, getParams(req.url as string), getKey, performance.now(), options, toYoga).catch(() => {
        if (!res.headersSent) toYoga();
        else res.destroy();
      });
      return;
    }
    const headersKey = plainRequest(req, options.maxBodyBytes);
    if (headersKey === undefined) return handOver(req, res, undefined, options);
    const started = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const toYoga = (handOff?: HandOff) => handOver(req, res, body, options, handOff);
      serve(req, res, plainBody(body), headersKey, started, options, toYoga).catch(() => {
        // Only a bug of ours gets here (serve hands every unexpected case to Yoga): Yoga answers
        // it, which may run the operation again; nothing has been written yet.
        if (!res.headersSent) handOver(req, res, body, options);
        else res.destroy();
      });
    });
  };
}

/**
 * Serves one request whose GraphQL parameters were read (from the body or the query string), or
 * gives it to Yoga with `toYoga`, saying what it knows; `params` undefined: they are not the plain
 * case.
 */
async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  params: PlainParams | undefined,
  headersKey: string,
  started: number,
  options: FastLaneOptions,
  toYoga: (handOff?: HandOff) => void,
): Promise<void> {
  const { lanes } = options;
  if (params === undefined) return toYoga();
  const parsed = params as GraphQLParams;
  const key = operationKey(
    params.query,
    params.documentId,
    params.operationName,
    params.extensions?.persistedQuery?.sha256Hash,
  );
  if (key === undefined) return toYoga({ parsed });
  // A JSON number past 2^53 was rounded by the parse: Yoga's lane refuses it where an ID is expected.
  if (params.variables && hasUnsafeNumber(params.variables)) return toYoga({ parsed });
  const prepared = lanes.prepared.get(key);
  const headers = lanes.headers.get(headersKey);
  if (prepared === undefined || headers === undefined) {
    return toYoga({ parsed, toPrepare: { operation: key, headers: headersKey } });
  }
  // Only queries run over GET: Yoga answers anything else 405.
  if (req.method === 'GET' && prepared.operationType !== 'query') return toYoga({ parsed });

  // A refused request goes to Yoga, which answers the 429; the limit remembers its decision for
  // this request, so Yoga's check does not count it again (nor does it for a result with errors).
  if (options.rateLimit && (await options.rateLimit.check(req, req.headers.authorization)).limited)
    return toYoga({ parsed });

  const variables = params.variables ?? {};
  const context = createContext(req.headers.authorization, options.context, variables);
  const executeStarted = performance.now();
  const span = options.tracing?.startOperation(
    (name) => headerValue(req, name) ?? undefined,
    prepared.operationType,
    prepared.operationName,
  );
  let planned = false;
  const execute = async (): Promise<ExecutionResult> => {
    if (prepared.plan) {
      const data = await runPlan(prepared.plan, context, variables);
      planned = data !== undefined;
      if (data !== undefined) return { data };
      // The compiled path runs the same operation with the same context: what the plan received
      // is in the loaders' memo, and any POST it made is answered again, not sent again.
      context.loaders.replay();
    }
    return prepared.compiled.query(undefined, context, variables) as Promise<ExecutionResult>;
  };
  const result = await (span ? span.run(execute) : execute());
  context.release();
  const executeSeconds = (performance.now() - executeStarted) / 1000;
  if (result.errors?.length || result.data == null) {
    // Yoga ends the span with the errors it finally answers.
    if (span) context.operationSpan = span;
    return toYoga({ parsed, executed: { context, result } });
  }
  span?.end();
  if (planned) lanes.served.planned++;
  write(req, res, prepared, context, result, headers, started, executeSeconds, options);
}

function write(
  req: IncomingMessage,
  res: ServerResponse,
  prepared: PreparedOperation,
  context: Context,
  result: ExecutionResult,
  learned: readonly string[],
  started: number,
  executeSeconds: number,
  options: FastLaneOptions,
): void {
  let deprecation: { deprecation: string; sunset: string } | undefined;
  let extensions: ExecutionResult['extensions'] | undefined;
  if (context.deprecations.size > 0) {
    const list = context.deprecations.list();
    options.onDeprecatedUse({
      fields: list.map((notice) => notice.field),
      ...clientIdentity((name) => headerValue(req, name)),
    });
    extensions = { ...result.extensions, deprecations: list };
    deprecation = deprecationHeaders(list[0] as (typeof list)[0]);
  }
  const text = JSON.stringify(extensions ? { ...result, extensions } : result);
  const requestId = requestIdOf(headerValue(req, 'x-request-id'));
  const acceptEncoding = headerValue(req, 'accept-encoding') ?? undefined;
  // The same choice and bytes as Yoga's lane (yoga/response/compression.ts), never a second encoder.
  const encoding = acceptEncoding ? chooseEncoding(acceptEncoding, Buffer.byteLength(text)) : undefined;
  const body = encoding ? encode(text, encoding) : text;
  const headers = [
    ...learned,
    'content-length',
    String(Buffer.byteLength(body)),
    'cache-control',
    cacheControl({ ok: true, operationType: prepared.operationType }, options.cacheMaxAgeSeconds),
  ];
  if (encoding) headers.push('content-encoding', encoding);
  if (deprecation) headers.push('deprecation', deprecation.deprecation, 'sunset', deprecation.sunset);
  headers.push('x-request-id', requestId);
  res.writeHead(200, headers);
  res.end(body);
  options.lanes.served.fast++;

  const record: OperationRecord = {
    started,
    requestId,
    clientAddress: options.clientAddress(req),
    operationType: prepared.operationType,
    upstreamCalls: context.upstreamCalls,
    ...(prepared.operationName === undefined ? {} : { operationName: prepared.operationName }),
  };
  logOperation(options.logger, record, 200);
  options.metrics?.servedFast({
    operationName: prepared.operationName,
    operationType: prepared.operationType,
    executeSeconds,
    httpSeconds: (performance.now() - started) / 1000,
    status: 200,
    method: req.method === 'GET' ? 'GET' : 'POST',
  });
}

/**
 * Gives the request to Yoga with what the fast lane knows of it (its parameters, when a POST body was
 * a plain one, spare Yoga's parser a second decode and parse), and the body when the fast lane has
 * read it.
 */
function handOver(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  options: FastLaneOptions,
  handOff?: HandOff,
): void {
  options.lanes.served.yoga++;
  // @whatwg-node/server builds the fetch Request from `req.body` when a framework has read it.
  if (body) (req as IncomingMessage & { body?: Buffer }).body = body;
  if (handOff) options.yoga(req, res, { lane: handOff });
  else options.yoga(req, res);
}

/**
 * For a request the fast lane may take, the key of the headers its answer depends on; undefined
 * sends it to Yoga. It must be a JSON POST to exactly /graphql with a declared length within the
 * cap, and no content coding.
 */
function plainRequest(req: IncomingMessage, maxBodyBytes: number): string | undefined {
  if (req.method !== 'POST' || req.url !== '/graphql') return undefined;
  const headers = req.headers;
  if (!JSON_MEDIA_TYPES.has(headers['content-type'])) return undefined;
  const length = headers['content-length'];
  if (length === undefined || headers['transfer-encoding'] !== undefined) return undefined;
  const declared = Number(length);
  if (!(declared > 0 && declared <= maxBodyBytes)) return undefined;
  if (headers['content-encoding'] !== undefined) return undefined;
  return headersKey(headers.accept, headers.origin, headers['accept-encoding']);
}

/**
 * For a GET the fast lane may take, the key of the headers its answer depends on (kept apart from
 * POSTs'); undefined sends it to Yoga. It must be a GET of /graphql with a query string, no body,
 * and not a browser asking for HTML (GraphiQL is Yoga's).
 */
function plainGet(req: IncomingMessage): string | undefined {
  if (req.method !== 'GET' || !req.url?.startsWith('/graphql?')) return undefined;
  const headers = req.headers;
  if (headers['transfer-encoding'] !== undefined || headers['content-encoding'] !== undefined)
    return undefined;
  if (headers['content-length'] !== undefined && headers['content-length'] !== '0') return undefined;
  if (typeof headers.accept === 'string' && headers.accept.includes('text/html')) return undefined;
  const key = headersKey(headers.accept, headers.origin, headers['accept-encoding']);
  return key === undefined ? undefined : `GET\u0000${key}`;
}

/** A GET's GraphQL parameters, read as Yoga's lane reads them (query-params.ts), when plain. */
function getParams(url: string): PlainParams | undefined {
  let params: QueryParams;
  try {
    params = parseQueryParams(url);
  } catch {
    return undefined;
  }
  return plainParams(params as Record<string, unknown>);
}

interface PlainParams {
  query?: string;
  documentId?: string;
  /** Only `persistedQuery` (an APQ hash sent alone) and `clientLibrary`. */
  extensions?: { persistedQuery?: { sha256Hash: string } };
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

/** The body's GraphQL parameters when they are the plain case, else undefined (Yoga words any refusal). */
function plainBody(body: Buffer): PlainParams | undefined {
  // Yoga's lane refuses invalid UTF-8; Buffer#toString would replace it silently.
  if (!isUtf8(body)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  for (const key in value) if (!BODY_KEYS.has(key)) return undefined;
  return plainParams(value as Record<string, unknown>);
}

/** The parameters when they are the plain case (one document, plain extensions), else undefined. */
function plainParams(value: Record<string, unknown>): PlainParams | undefined {
  const { query, documentId, operationName, variables, extensions } = value;
  const hash = extensions === undefined ? undefined : persistedHash(extensions);
  if (hash === null) return undefined;
  if ([query, documentId, hash].filter((given) => given !== undefined).length !== 1) return undefined;
  if (query !== undefined && typeof query !== 'string') return undefined;
  if (documentId !== undefined && typeof documentId !== 'string') return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
  return value as PlainParams;
}

/**
 * The APQ hash in plain extensions (undefined when they hold none), or null when the extensions
 * are anything else: Yoga words whatever they need.
 */
function persistedHash(extensions: unknown): string | undefined | null {
  if (typeof extensions !== 'object' || extensions === null || Array.isArray(extensions)) return null;
  for (const key in extensions) if (!EXTENSION_KEYS.has(key)) return null;
  const { persistedQuery, clientLibrary } = extensions as Record<string, unknown>;
  if (clientLibrary !== undefined && (typeof clientLibrary !== 'object' || clientLibrary === null))
    return null;
  if (persistedQuery === undefined) return undefined;
  if (typeof persistedQuery !== 'object' || persistedQuery === null) return null;
  const keys = Object.keys(persistedQuery);
  const { version, sha256Hash } = persistedQuery as Record<string, unknown>;
  if (keys.length !== 2 || version !== 1 || typeof sha256Hash !== 'string' || sha256Hash === '') return null;
  return sha256Hash;
}

/** Whether a JSON value holds a number a double cannot hold exactly. */
function hasUnsafeNumber(value: unknown): boolean {
  if (typeof value === 'number')
    return !Number.isSafeInteger(value) && Math.abs(value) > Number.MAX_SAFE_INTEGER;
  if (typeof value !== 'object' || value === null) return false;
  for (const item of Array.isArray(value) ? value : Object.values(value))
    if (hasUnsafeNumber(item)) return true;
  return false;
}

function headerValue(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return typeof value === 'string' ? value : null;
}
