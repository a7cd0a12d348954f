import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { headersKey } from '../policy/prepared-operations.ts';
import { parseQueryParams, type QueryParams } from '../policy/query-params.ts';

/*
 * Which requests the fast lane takes: a plain JSON POST (or GET) to /graphql whose parameters are
 * the plain case. Anything else is Yoga's, which words every refusal.
 */

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
 * For a request the fast lane may take, the key of the headers its answer depends on; undefined
 * sends it to Yoga. It must be a JSON POST to exactly /graphql with a declared length within the
 * cap, and no content coding.
 */
export function plainRequest(req: IncomingMessage, maxBodyBytes: number): string | undefined {
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
export function plainGet(req: IncomingMessage): string | undefined {
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
export function getParams(url: string): PlainParams | undefined {
  let params: QueryParams;
  try {
    params = parseQueryParams(url);
  } catch {
    return undefined;
  }
  return plainParams(params as Record<string, unknown>);
}

export interface PlainParams {
  query?: string;
  documentId?: string;
  /** Only `persistedQuery` (an APQ hash sent alone) and `clientLibrary`. */
  extensions?: { persistedQuery?: { sha256Hash: string } };
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

/**
 * The body's GraphQL parameters when they are the plain case: one operation's, or a batch's (2 to
 * `maxBatch` entries, each the plain case); else undefined (Yoga words any refusal).
 */
export function plainBody(body: Buffer, maxBatch = 1): PlainParams | PlainParams[] | undefined {
  // Yoga's lane refuses invalid UTF-8; Buffer#toString would replace it silently.
  if (!isUtf8(body)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value)) return plainObject(value);
  if (value.length < 2 || value.length > maxBatch) return undefined;
  const entries: PlainParams[] = [];
  for (const entry of value) {
    const params = plainObject(entry);
    if (params === undefined) return undefined;
    entries.push(params);
  }
  return entries;
}

function plainObject(value: unknown): PlainParams | undefined {
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
