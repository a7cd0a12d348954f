import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLParams } from 'graphql-yoga';
import { hasUnsafeNumber } from '../contract/int64.ts';
import { cancelWhenClientGoes } from '../policy/client-gone.ts';
import type { Charge } from '../policy/cost-budget.ts';
import { operationKey } from '../policy/prepared-operations.ts';
import { type Context, createContext } from '../schema/context.ts';
import { answerClientGone, answerOperation, costOf } from './answer.ts';
import { serveBatch } from './batch.ts';
import { type FastLaneOptions, handOver, headerValue, rescue, type Served } from './hand-over.ts';
import { callOnce, mayCallOnce } from './one-call.ts';
import { getParams, type PlainParams, plainBody, plainGet, plainRequest } from './plain-request.ts';
import { type Runnable, runnableOf } from './run-prepared.ts';

export type { FastLaneOptions, YogaHandler } from './hand-over.ts';

/**
 * The fast lane: serves operations Yoga has already prepared (see prepared-operations.ts) without
 * Yoga's fetch-API adapter, envelop pipeline or result processing. It does only what is left per
 * request: read the capped body (or a GET's query string: queries only), find the prepared
 * operation, run it (one-call.ts's single call, else its plan or compiled form on a context), and
 * write what Yoga would have written (same status, body bytes and headers), log the same line and
 * count the same metrics. Whatever is not the plain case goes to Yoga, with the body it read:
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
      serve(req, res, undefined, getParams(req.url as string), getKey, performance.now(), options).catch(() =>
        rescue(req, res, undefined, options),
      );
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
      const params = plainBody(body, options.maxBatchOperations);
      const served = Array.isArray(params)
        ? serveBatch(req, res, body, params, headersKey, started, options)
        : serve(req, res, body, params, headersKey, started, options);
      served.catch(() => rescue(req, res, body, options));
    });
  };
}

/**
 * Serves one request whose GraphQL parameters were read (from the body, or the query string when
 * `body` is undefined), or gives it to Yoga with the body and what it knows; `params` undefined:
 * they are not the plain case.
 */
async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  params: PlainParams | undefined,
  headersKey: string,
  started: number,
  options: FastLaneOptions,
): Promise<void> {
  const { lanes } = options;
  if (params === undefined) return handOver(req, res, body, options);
  const parsed = params as GraphQLParams;
  const key = operationKey(
    params.query,
    params.documentId,
    params.operationName,
    params.extensions?.persistedQuery?.sha256Hash,
  );
  if (key === undefined) return handOver(req, res, body, options, { parsed });
  // A JSON number past 2^53 was rounded by the parse: Yoga's lane refuses it where an ID is expected.
  if (params.variables && hasUnsafeNumber(params.variables))
    return handOver(req, res, body, options, { parsed });
  const headers = lanes.headers.get(headersKey);
  const variables = params.variables ?? {};
  const found = headers && runnableOf(params, key, variables, options.lanes);
  if (found === undefined || headers === undefined) {
    return handOver(req, res, body, options, { parsed, toPrepare: { operation: key, headers: headersKey } });
  }
  // Only queries run over GET: Yoga answers anything else 405.
  if (req.method === 'GET' && found.named.operationType !== 'query')
    return handOver(req, res, body, options, { parsed });

  // A refused request goes to Yoga, which answers the 429; the limit remembers its decision for
  // this request, so Yoga's check does not count it again (nor does it for a result with errors).
  if (options.rateLimit && (await options.rateLimit.check(req, req.headers.authorization)).limited)
    return handOver(req, res, body, options, { parsed });
  const served: Served = { req, res, body, parsed, variables, headers, started };
  if (options.costBudget) {
    // Priced as Yoga prices it; one Yoga refuses (over MAX_COST, or unpriceable) is not charged.
    const estimated = found.cost()?.estimated;
    if (estimated === undefined || estimated > options.context.maxCost)
      return handOver(req, res, body, options, { parsed });
    const charged = await options.costBudget.charge(req, req.headers.authorization, estimated);
    if (charged.limited) return handOver(req, res, body, options, { parsed, charged });
    served.charged = charged;
  }
  if (found.oneCall && mayCallOnce(options)) return callOnce(served, found, found.oneCall, options, run);
  return run(served, found, options);
}

/**
 * Executes a prepared operation, or the plan found by a document's shape, and answers, or hands
 * the result to Yoga; on `given`, a context one-call.ts made, when there is one.
 */
async function run(
  served: Served,
  found: Runnable,
  options: FastLaneOptions,
  given?: Context,
): Promise<void> {
  const { req, res, body, parsed } = served;
  const prepared = found.named;
  const context = given ?? createContext(req.headers.authorization, options.context);
  cancelWhenClientGoes(res, context.loaders);
  const executeStarted = performance.now();
  const span = options.tracing?.startOperation(
    (name) => headerValue(req, name) ?? undefined,
    prepared.operationType,
    prepared.operationName,
  );
  const planned = { count: 0 };
  const execute = () => found.execute(context, planned);
  const result = await (span ? span.run(execute) : execute());
  const executeSeconds = (performance.now() - executeStarted) / 1000;
  // Nobody is left to answer, in this lane or Yoga's (which would not see the client gone): only
  // the log line and metrics say so, whether or not the plan stepped aside.
  if (res.destroyed) {
    context.release();
    if (options.context.costReport) context.cost = costOf(found, result?.data, served.charged);
    span?.end(result?.errors);
    return answerClientGone(req, prepared, context, served.started, executeSeconds, options);
  }
  if (result === undefined) {
    // The plan stepped aside for a document of its shape: Yoga runs the document itself, on this
    // context (what the plan received is in the loaders' memo), and ends the span.
    if (span) context.operationSpan = span;
    return handOver(req, res, body, options, { parsed, ranOn: context, ...chargedOf(served) });
  }
  context.release();
  if (result.errors?.length || result.data == null) {
    // Yoga ends the span with the errors it finally answers.
    if (span) context.operationSpan = span;
    return handOver(req, res, body, options, { parsed, executed: { context, result }, ...chargedOf(served) });
  }
  if (options.context.costReport) context.cost = costOf(found, result.data, served.charged);
  span?.end();
  if (planned.count > 0) options.lanes.served.planned++;
  answerOperation(
    req,
    res,
    prepared,
    context,
    result,
    served.headers,
    served.started,
    executeSeconds,
    options,
  );
}

/** The charge a hand-over passes on, so Yoga settles it instead of charging again. */
function chargedOf(served: Served): { charged?: Charge } {
  return served.charged ? { charged: served.charged } : {};
}
