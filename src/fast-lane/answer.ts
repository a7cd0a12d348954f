import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { CLIENT_GONE_STATUS, logOperation, type OperationRecord } from '../observability/operation-line.ts';
import { type RequestId, requestIdOf } from '../observability/request-id.ts';
import { cacheControl } from '../policy/cache-headers.ts';
import { chooseEncoding, encode } from '../policy/compression.ts';
import { type CostReport, costHeaders, settledCost, withCost } from '../policy/cost.ts';
import type { TakenCharge } from '../policy/cost-budget.ts';
import { deprecationAnswer } from '../policy/deprecation-headers.ts';
import { etagOf, matchesETag, NOT_IN_304, tagged } from '../policy/etag.ts';
import type { PreparedOperation } from '../policy/prepared-operations.ts';
import type { Context } from '../schema/context.ts';
import { type FastLaneOptions, headerValue } from './hand-over.ts';

/**
 * What prices an operation the fast lane runs (run-prepared.ts's Runnable has it), said here by
 * its shape so that this room, which run-prepared.ts imports, need not import it back.
 */
export type Priced = { readonly cost: (data?: unknown) => CostReport | undefined };

/** What the log line, metrics and span name an operation by. */
export type Named = Pick<PreparedOperation, 'operationType' | 'operationName'>;

/**
 * What an operation used, for its answer and log line: the deprecated fields it touched (none when
 * it ran on no context) and the upstream calls it made. A request's context is one.
 */
export type Used = Pick<Context, 'upstreamCalls'> &
  Partial<Pick<Context, 'deprecations' | 'sharedUpstreamCalls' | 'cost'>>;

/**
 * What an operation cost (COST_REPORT=on), as Yoga's lane says it: priced by what it ran
 * (run-prepared.ts), and with its charge to the caller's budget settled to the actual.
 */
export function costOf(
  found: Priced,
  data: unknown,
  charged: TakenCharge | undefined,
): CostReport | undefined {
  const cost = found.cost(data ?? undefined);
  return cost && charged ? settledCost(cost.estimated, cost.actual, charged) : cost;
}

/** An operation answered with its data, as Yoga would: the answer, the log line, the metrics. */
export function answerOperation(
  req: IncomingMessage,
  res: ServerResponse,
  prepared: Named,
  used: Used,
  result: ExecutionResult,
  learned: readonly string[],
  started: number,
  executeSeconds: number,
  options: FastLaneOptions,
): void {
  const header = (name: string) => headerValue(req, name);
  const deprecation = deprecationAnswer(used.deprecations, header, options.onDeprecatedUse);
  const { cost } = used;
  // In Yoga's order: its deprecation notices come before the cost.
  const noted = deprecation
    ? { ...result, extensions: { ...result.extensions, deprecations: deprecation.notices } }
    : result;
  const text = JSON.stringify(cost ? withCost(noted, cost) : noted);
  const requestId = requestIdOf(headerValue(req, 'x-request-id'));
  let extra = deprecation
    ? ['deprecation', deprecation.headers.deprecation, 'sunset', deprecation.headers.sunset]
    : undefined;
  if (cost) extra = extra ? [...extra, ...costHeaders(cost)] : costHeaders(cost);
  const status = writeAnswer(req, res, text, learned, prepared.operationType, extra, requestId, options);
  options.lanes.served.fast++;
  recordOperation(req, prepared, used, started, executeSeconds, requestId, status, options);
}

/**
 * A request whose client went away before its answer was written: nothing is written, and it is
 * logged and counted as every lane counts it, with the status its line gives (499).
 */
export function answerClientGone(
  req: IncomingMessage,
  prepared: Named,
  used: Used,
  started: number,
  executeSeconds: number,
  options: FastLaneOptions,
): void {
  const requestId = requestIdOf(headerValue(req, 'x-request-id'));
  recordOperation(req, prepared, used, started, executeSeconds, requestId, CLIENT_GONE_STATUS, options);
}

/**
 * The operation's log line and metrics, answered (200, or 304 to a GET whose tag still holds) or
 * its client gone (499): every fast-lane path records through here, a batch entry with its place
 * (`entry`) and the address its batch read once, the request's HTTP duration counted once, with
 * its last entry.
 */
export function recordOperation(
  req: IncomingMessage,
  prepared: Named,
  used: Used,
  started: number,
  executeSeconds: number,
  requestId: RequestId,
  status: number,
  options: FastLaneOptions,
  entry?: { readonly index: number; readonly size: number },
  clientAddress = options.clientAddress(req),
): void {
  const record: OperationRecord = {
    started,
    requestId,
    clientAddress,
    operationType: prepared.operationType,
    upstreamCalls: used.upstreamCalls,
  };
  if (used.sharedUpstreamCalls) record.sharedUpstreamCalls = used.sharedUpstreamCalls;
  if (entry) record.batch = entry;
  if (status === CLIENT_GONE_STATUS) record.clientGone = true;
  if (prepared.operationName !== undefined) record.operationName = prepared.operationName;
  const { cost } = used;
  if (cost) record.cost = () => cost;
  logOperation(options.logger, record, status);
  if (cost) options.metrics?.cost(prepared.operationType, cost);
  const last = entry === undefined || entry.index === entry.size - 1;
  options.metrics?.servedFast({
    operationName: prepared.operationName,
    operationType: prepared.operationType,
    executeSeconds,
    httpSeconds: last ? (performance.now() - started) / 1000 : undefined,
    status,
    method: req.method === 'GET' ? 'GET' : 'POST',
  });
}

/**
 * Writes a successful answer as Yoga's lane would: the headers Yoga's answer carried (`learned`),
 * the same encoding choice and bytes (yoga/response/compression.ts, never a second encoder), the
 * caching of a success and a GET's tag (policy/etag.ts: 304 with no body when If-None-Match names
 * it), then `extra` (deprecation headers) and the request id. Both of the fast lane's paths (one
 * operation, a batch) answer through it. Returns the status written.
 */
export function writeAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  text: string,
  learned: readonly string[],
  operationType: string,
  extra: readonly string[] | undefined,
  requestId: string,
  options: Pick<FastLaneOptions, 'cacheMaxAgeSeconds'>,
): number {
  const control = cacheControl({ ok: true, operationType }, options.cacheMaxAgeSeconds);
  const etag = tagged(req.method, control) ? etagOf(text) : undefined;
  if (etag !== undefined && matchesETag(req.headers['if-none-match'], etag)) {
    const kept: string[] = [];
    for (let i = 0; i < learned.length; i += 2) {
      const name = learned[i] as string;
      if (!NOT_IN_304.has(name)) kept.push(name, learned[i + 1] as string);
    }
    kept.push('cache-control', control, 'etag', etag);
    if (extra) kept.push(...extra);
    kept.push('x-request-id', requestId);
    res.writeHead(304, kept);
    res.end();
    return 304;
  }
  const acceptEncoding = req.headers['accept-encoding'];
  const encoding =
    typeof acceptEncoding === 'string' && acceptEncoding !== ''
      ? chooseEncoding(acceptEncoding, Buffer.byteLength(text))
      : undefined;
  // Unencoded, the text itself: Node sends it with the head in one string write, which measured
  // cheaper than a Buffer's (docs/performance.md, "Where the time goes").
  const body = encoding ? encode(text, encoding) : text;
  const headers = [...learned, 'content-length', String(Buffer.byteLength(body)), 'cache-control', control];
  if (etag !== undefined) headers.push('etag', etag);
  if (encoding) headers.push('content-encoding', encoding);
  if (extra) headers.push(...extra);
  headers.push('x-request-id', requestId);
  res.writeHead(200, headers);
  res.end(body);
  return 200;
}
