import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import { CODES } from '../codes.ts';
import { readCapped } from '../policy/body-cap.ts';
import { refuse } from '../policy/error-body.ts';
import { etagOf, matchesETag } from '../policy/etag.ts';
import { writeFetchAnswer } from '../policy/fetch-answer.ts';
import { schema as publicSchema } from '../schema/index.ts';
import { bearerAuthorization } from '../upstream/authorization.ts';
import { listOf, toCsv } from './csv.ts';
import { openApiOf } from './openapi.ts';
import { type RestOperation, restOperations } from './operations.ts';
import { variablesOf } from './parameters.ts';

/*
 * `/rest/{operationName}`: the trusted documents as plain REST for scripts, spreadsheets and
 * partners. Each call is one GraphQL request that Yoga serves, by the document's id and with the
 * caller's key, so every rule of a request holds as on `/graphql` (limits, cost, trusted documents,
 * the rate limit, the log line, metrics, the cache, ETags); this room only reads the parameters in
 * and writes the answer out, as JSON or, for a list, CSV.
 */

/** Yoga's `fetch`, with the node request as its server context (the address, the rate limit). */
export type RestFetch = (
  url: string,
  init: RequestInit,
  context: { req: IncomingMessage },
) => Promise<Response>;

export interface RestEndpointOptions {
  fetch: RestFetch;
  /** The trusted-documents manifest: each named query and mutation is an endpoint. */
  documents: ReadonlyMap<string, string>;
  /** The schema Yoga serves (a test's own), for the parameters' and answers' types. @default the public one */
  schema?: GraphQLSchema;
  /** MAX_BODY_BYTES: the bound on a mutation's JSON body. */
  maxBodyBytes: number;
  logger: Logger;
}

const PREFIX = '/rest/';
const OPENAPI = 'openapi.json';
const CSV_TYPE = 'text/csv; charset=utf-8';

/** The operation a path names; '' for one that does not decode (`%zz`), which names none. */
function nameOf(pathname: string): string {
  try {
    return decodeURIComponent(pathname.slice(PREFIX.length));
  } catch {
    return '';
  }
}

/** Whether the caller asked for CSV: `?format=csv`, or an Accept that names text/csv. */
function wantsCsv(req: IncomingMessage, search: URLSearchParams): boolean {
  const format = search.get('format');
  if (format !== null) return format.toLowerCase() === 'csv';
  return /\btext\/csv\b/i.test(req.headers.accept ?? '');
}

/** The headers Yoga reads from a REST call: the caller's key, its request id, its encoding wishes. */
function forwarded(req: IncomingMessage, csv: boolean): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/graphql-response+json' };
  // A CSV is made from Yoga's JSON, whole and plain: its tag and its encoding are the CSV's own.
  const names = ['authorization', 'x-request-id', 'graphql-client-name'];
  if (!csv) names.push('if-none-match', 'accept-encoding');
  for (const name of names) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** A list answer as CSV, with its own tag (304 when If-None-Match names it); JSON when no list. */
async function asCsv(req: IncomingMessage, res: ServerResponse, response: Response): Promise<void> {
  const text = await response.text();
  let answer: { data?: unknown; errors?: unknown[] } | undefined;
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    answer = undefined;
  }
  const rows = response.status === 200 && !answer?.errors?.length ? listOf(answer?.data) : undefined;
  if (rows === undefined) {
    if (response.status !== 200 || answer?.errors?.length)
      return writeFetchAnswer(res, new Response(text, response));
    return refuse(res, CODES.NOT_ACCEPTABLE, 'CSV is for an answer that is one list: ask this one as JSON.');
  }
  const csv = toCsv(rows);
  const etag = etagOf(csv);
  const headers: Record<string, string> = {
    'cache-control': response.headers.get('cache-control') ?? 'no-store',
    vary: response.headers.get('vary') ?? 'Accept, Authorization',
    etag,
  };
  const requestId = response.headers.get('x-request-id');
  if (requestId) headers['x-request-id'] = requestId;
  if (matchesETag(req.headers['if-none-match'], etag)) {
    res.writeHead(304, headers);
    return void res.end();
  }
  res.writeHead(200, {
    ...headers,
    'content-type': CSV_TYPE,
    'content-length': String(Buffer.byteLength(csv)),
  });
  res.end(csv);
}

/** The GraphQL request a call becomes: a query over GET, a mutation as a JSON POST, by document id. */
function graphqlRequest(
  operation: RestOperation,
  variables: Record<string, unknown>,
  headers: Record<string, string>,
): [string, RequestInit] {
  const parameters = { documentId: operation.documentId, operationName: operation.name };
  if (operation.method === 'GET') {
    const search = new URLSearchParams({ ...parameters, variables: JSON.stringify(variables) });
    return [`http://gateway/graphql?${search}`, { method: 'GET', headers }];
  }
  return [
    'http://gateway/graphql',
    {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ ...parameters, variables }),
    },
  ];
}

/** A mutation's variables: its JSON body, an object (or nothing, for one that takes none). */
async function bodyVariables(
  req: IncomingMessage,
  res: ServerResponse,
  maxBodyBytes: number,
): Promise<Record<string, unknown> | undefined> {
  const read = await readCapped(req, maxBodyBytes);
  if ('problem' in read) {
    if (read.problem === 'client gone') return undefined;
    return void refuse(
      res,
      CODES.PAYLOAD_TOO_LARGE,
      `The request body is over ${maxBodyBytes} bytes (MAX_BODY_BYTES).`,
    );
  }
  if (read.text.trim() === '') return {};
  try {
    const variables = JSON.parse(read.text) as unknown;
    if (typeof variables === 'object' && variables !== null && !Array.isArray(variables))
      return variables as Record<string, unknown>;
  } catch {
    // refused below
  }
  return void refuse(res, CODES.BAD_REQUEST, "The body must be a JSON object of the operation's variables.");
}

/** Serves `/rest/…`: returns true for its paths (answered, now or soon), false for any other. */
export function createRestEndpoint(
  options: RestEndpointOptions,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const operations = restOperations(options.documents, options.schema ?? publicSchema);
  const openapi = JSON.stringify(openApiOf(operations.values()));
  const openapiTag = etagOf(openapi);

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const name = nameOf(url.pathname);
    if (name === OPENAPI) {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return refuse(res, CODES.METHOD_NOT_ALLOWED, 'The OpenAPI document is read with GET.', {
          allow: 'GET, HEAD',
        });
      const headers = { 'cache-control': 'public, max-age=300', etag: openapiTag };
      if (matchesETag(req.headers['if-none-match'], openapiTag))
        return void res.writeHead(304, headers).end();
      res.writeHead(200, { ...headers, 'content-type': 'application/json; charset=utf-8' });
      return void res.end(req.method === 'HEAD' ? undefined : openapi);
    }
    const operation = operations.get(name);
    if (operation === undefined) {
      return refuse(
        res,
        CODES.NOT_FOUND,
        `No REST endpoint ${url.pathname}: GET ${PREFIX}${OPENAPI} lists them.`,
      );
    }
    // HEAD is GET without the body, which node:http leaves out of a HEAD answer itself.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    if (method !== operation.method) {
      return refuse(res, CODES.METHOD_NOT_ALLOWED, `${url.pathname} is called with ${operation.method}.`, {
        allow: operation.method === 'GET' ? 'GET, HEAD' : operation.method,
      });
    }
    // Every operation reads the store with the caller's key: without one, nothing to run.
    const caller = bearerAuthorization(req.headers.authorization);
    if (caller.authorization === undefined) {
      // A whole request refused: the status a field's UNAUTHENTICATED only names in its extensions.
      const unauthenticated = { ...CODES.UNAUTHENTICATED, status: CODES.UNAUTHENTICATED.extensions.status };
      return refuse(res, unauthenticated, caller.problem, {
        'www-authenticate': 'Bearer realm="pet-gateway"',
      });
    }
    const csv = operation.method === 'GET' && wantsCsv(req, url.searchParams);
    let variables: Record<string, unknown>;
    if (operation.method === 'GET') {
      const read = variablesOf(operation, url.searchParams);
      if ('problem' in read) return refuse(res, CODES.BAD_USER_INPUT, `${read.problem}.`);
      variables = read.variables;
    } else {
      const read = await bodyVariables(req, res, options.maxBodyBytes);
      if (read === undefined) return;
      variables = read;
    }
    const [target, init] = graphqlRequest(operation, variables, forwarded(req, csv));
    const response = await options.fetch(target, init, { req });
    return csv ? asCsv(req, res, response) : writeFetchAnswer(res, response);
  };

  return (req, res) => {
    if (!req.url?.startsWith(PREFIX)) return false;
    serve(req, res).catch((error: unknown) => {
      options.logger.error({ err: error }, 'rest request failed');
      if (!res.headersSent) refuse(res, CODES.INTERNAL_SERVER_ERROR, 'Internal error: see the gateway log.');
      else res.destroy();
    });
    return true;
  };
}
