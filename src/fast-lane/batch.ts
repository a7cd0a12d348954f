import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { hasUnsafeNumber } from '../contract/int64.ts';
import { CLIENT_GONE_STATUS } from '../observability/operation-line.ts';
import { type RequestId, requestIdOf } from '../observability/request-id.ts';
import { cancelWhenClientGoes } from '../policy/client-gone.ts';
import { addCost, type CostReport, costHeaders, withCost } from '../policy/cost.ts';
import type { Charge, CostBudget, TakenCharge } from '../policy/cost-budget.ts';
import { operationKey } from '../policy/prepared-operations.ts';
import type { RateLimitDecision } from '../policy/rate-limit.ts';
import { type Context, createContext } from '../schema/context.ts';
import { bearerAuthorization } from '../upstream/authorization.ts';
import { type ListPetsQuery, listKey } from '../upstream/bodies.ts';
import type { Loaders } from '../upstream/loaders.ts';
import { costOf, recordOperation, writeAnswer } from './answer.ts';
import { type FastLaneOptions, handOver, headerValue, rescue } from './hand-over.ts';
import { callAll, mayCallOnce, type OneCall, requestOf } from './one-call.ts';
import type { PlainParams } from './plain-request.ts';
import { type Named, type Runnable, runnableOf } from './run-prepared.ts';

const ALLOWED: readonly RateLimitDecision[] = [];

/**
 * A batch of prepared queries, served as Yoga serves one (yoga/request/batches.ts): its entries run
 * together on the caller's shared loaders, each rate-limited, logged and counted on its own, and
 * the answer is one JSON array in entry order, in Yoga's bytes and headers. A batch that may hold
 * a mutation (run in order), an entry not prepared, or a trace to write is Yoga's from the start;
 * an entry refused by the rate limit, or whose result is not the plain case (errors, deprecated
 * fields), hands the whole batch to Yoga with the loaders (what they received is in their memo,
 * so nothing is sent upstream twice) and the rate limit's decisions (nothing is counted twice).
 * A batch whose entries are all one-call operations (one-call.ts) asking for different lists is
 * answered from the client's callbacks, as one such operation is (callEntriesOnce).
 */
export async function serveBatch(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  entries: readonly PlainParams[],
  headersKey: string,
  started: number,
  options: FastLaneOptions,
): Promise<void> {
  const batchHeaders = `batch\u0000${headersKey}`;
  const learned = options.lanes.headers.get(batchHeaders);
  const { runnable, keys } = runnableQueries(entries, options);
  if (options.tracing) return handOver(req, res, body, options);
  if (runnable === undefined || learned === undefined) {
    // Yoga prepares the entries it runs without errors, and learns the batch answer's headers.
    return handOver(req, res, body, options, { toPrepareBatch: { operations: keys, headers: batchHeaders } });
  }
  const authorization = req.headers.authorization;
  const { rateLimit } = options;
  const decisions = rateLimit
    ? await Promise.all(entries.map(() => rateLimit.check(req, authorization, {})))
    : ALLOWED;
  if (decisions.some((decision) => decision.limited)) {
    return handOver(req, res, body, options, { batch: { loaders: undefined, decisions } });
  }
  const charges = options.costBudget && (await chargeEntries(req, runnable, options));
  // Not charged (one Yoga refuses before its price): Yoga's lane charges the entries itself.
  if (charges === null)
    return handOver(req, res, body, options, { batch: { loaders: undefined, decisions } });
  if (charges?.some((charge) => charge.limited)) {
    return handOver(req, res, body, options, { batch: { loaders: undefined, decisions, charges } });
  }
  const batch: Batch = { req, res, body, entries, runnable, learned, decisions, charges, started };
  const { authorization: bearer } = bearerAuthorization(authorization);
  const calls = bearer !== undefined && mayCallOnce(options) ? oneCallsOf(batch, options) : undefined;
  if (bearer !== undefined && calls !== undefined) return callEntriesOnce(batch, bearer, calls, options);
  return runEntries(batch, options);
}

/** A batch the fast lane runs: the request, its entries and what each runs, and what it learned. */
interface Batch {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly body: Buffer;
  readonly entries: readonly PlainParams[];
  readonly runnable: readonly Runnable[];
  /** The headers of Yoga's answer to a batch of these headers. */
  readonly learned: readonly string[];
  readonly decisions: readonly RateLimitDecision[];
  /** Each entry's charge to the caller's budget (COST_BUDGET_PER_MINUTE), all of them charged. */
  readonly charges: readonly Charge[] | undefined;
  readonly started: number;
}

/**
 * Charges each entry's estimate to the caller's budget, as Yoga's lane charges an operation of a
 * batch; null when one is not priced here (over MAX_COST, or variables it refuses): Yoga words that.
 */
async function chargeEntries(
  req: IncomingMessage,
  runnable: readonly Runnable[],
  options: FastLaneOptions,
): Promise<Charge[] | null> {
  const budget = options.costBudget as CostBudget;
  const estimates = runnable.map((operation) => operation.cost()?.estimated);
  if (estimates.some((estimate) => estimate === undefined || estimate > options.context.maxCost)) return null;
  return Promise.all(
    estimates.map((estimate) => budget.charge(req, req.headers.authorization, estimate as number)),
  );
}

/**
 * Runs the entries on contexts sharing the caller's loaders; `adopt` first gives the loaders what
 * the entries' calls already answered (callEntriesOnce), so nothing is sent twice.
 */
async function runEntries(batch: Batch, options: FastLaneOptions, adopt?: (loaders: Loaders) => void) {
  const { req, res, body, entries, runnable, decisions, charges } = batch;
  const share: { loaders?: Loaders } = {};
  const contexts = entries.map(() => createContext(req.headers.authorization, options.context, share));
  if (share.loaders) {
    adopt?.(share.loaders);
    cancelWhenClientGoes(res, share.loaders);
  }
  const executeStarted = performance.now();
  const planned = { count: 0 };
  const results = await Promise.all(
    runnable.map((operation, index) => operation.execute(contexts[index] as Context, planned)),
  );
  const executeSeconds = (performance.now() - executeStarted) / 1000;
  // An entry found by shape whose plan stepped aside (undefined) is Yoga's, and so is its batch.
  const plain = results.every((result) => result && !result.errors?.length && result.data != null);
  if (!res.destroyed && (!plain || contexts.some((context) => context.deprecations.size > 0))) {
    // Yoga runs the entries again on these loaders, each through a view of its own: which entries
    // asked for a call is for its views to say, or every call would count as shared.
    share.loaders?.ledger().askers.clear();
    return handOver(req, res, body, options, {
      batch: { loaders: share.loaders, decisions, ...(charges ? { charges } : {}) },
    });
  }
  share.loaders?.release();
  // A request answered by plans alone, as for one operation.
  if (planned.count === runnable.length && !res.destroyed) options.lanes.served.planned++;
  const calls = contexts.map((context) => ({
    own: context.upstreamCalls(),
    shared: context.sharedUpstreamCalls?.() ?? 0,
  }));
  answerBatch(batch, results as ExecutionResult[], calls, executeSeconds, options);
}

/** Each entry's one call and its request, when every entry is a one-call operation (see serveBatch). */
function oneCallsOf(
  batch: Batch,
  options: FastLaneOptions,
): Array<{ oneCall: OneCall; request: ListPetsQuery }> | undefined {
  const calls: Array<{ oneCall: OneCall; request: ListPetsQuery }> = [];
  const lists = new Set<string>();
  for (const [index, { oneCall }] of batch.runnable.entries()) {
    const entry = batch.entries[index] as PlainParams;
    const request = oneCall && requestOf(oneCall, entry.variables ?? {}, options.context.maxCost);
    // The same list twice is one call on shared loaders: the usual way keeps it one.
    if (request === undefined || lists.has(listKey(request))) return undefined;
    lists.add(listKey(request));
    calls.push({ oneCall: oneCall as OneCall, request });
  }
  // No entry, no call to wait for: the usual way answers (plainBody refuses such a batch today).
  return calls.length > 0 ? calls : undefined;
}

/**
 * Serves a batch of one-call operations through the one-call engine (one-call.ts callAll), as a
 * single one is served: a failed call or an answer that would not serialise sends the batch the
 * usual way (runEntries), its loaders holding every call's outcome.
 */
function callEntriesOnce(
  batch: Batch,
  authorization: string,
  calls: ReadonlyArray<{ oneCall: OneCall; request: ListPetsQuery }>,
  options: FastLaneOptions,
): void {
  const { req, res, body } = batch;
  // Each entry asked for a list of its own (oneCallsOf): one call each, none shared.
  const each = calls.map(() => ONE_CALL_EACH);
  callAll(res, authorization, calls, options, {
    gone: (executeSeconds) => answerBatch(batch, [], each, executeSeconds, options),
    answered: (data, executeSeconds) =>
      answerBatch(
        batch,
        data.map((entry) => ({ data: entry })),
        each,
        executeSeconds,
        options,
      ),
    usual: (adopt) => void runEntries(batch, options, adopt).catch(() => rescue(req, res, body, options)),
    rescue: () => rescue(req, res, body, options),
  });
}

/** What one entry's log line counts: the upstream calls it asked for, and of those, the shared ones. */
interface EntryCalls {
  readonly own: number;
  readonly shared: number;
}

const ONE_CALL_EACH: EntryCalls = { own: 1, shared: 0 };

/** Writes the batch's answer (unless its client went away), then its lines and counts. */
function answerBatch(
  batch: Batch,
  results: readonly ExecutionResult[],
  upstreamCalls: readonly EntryCalls[],
  executeSeconds: number,
  options: FastLaneOptions,
): void {
  const { req, res, entries, runnable, learned, started } = batch;
  const requestIds = entries.map(() => requestIdOf(headerValue(req, 'x-request-id')));
  const gone = res.destroyed;
  // With COST_REPORT=on, each entry's cost (the estimate alone when nothing came back).
  const costs = options.context.costReport
    ? runnable.map((operation, index) =>
        costOf(operation, results[index]?.data, batch.charges?.[index] as TakenCharge | undefined),
      )
    : undefined;
  if (!gone) writeArray(req, res, results, costs, learned, requestIds[0] as RequestId, options);
  const named = runnable.map((operation) => operation.named);
  logAndCount(req, named, upstreamCalls, costs, requestIds, started, executeSeconds, gone, options);
}

/**
 * What the fast lane runs for each entry (runnableOf), or undefined when one is not a query it may
 * run; and each entry's operation key (undefined where it can never be prepared), for Yoga to prepare.
 */
function runnableQueries(
  entries: readonly PlainParams[],
  options: FastLaneOptions,
): { runnable: Runnable[] | undefined; keys: Array<string | undefined> } {
  let runnable: Runnable[] | undefined = [];
  const keys: Array<string | undefined> = [];
  for (const entry of entries) {
    // A JSON number past 2^53 was rounded by the parse: Yoga's lane refuses it where an ID is expected.
    const unsafe = entry.variables != null && hasUnsafeNumber(entry.variables);
    const key = unsafe
      ? undefined
      : operationKey(
          entry.query,
          entry.documentId,
          entry.operationName,
          entry.extensions?.persistedQuery?.sha256Hash,
        );
    keys.push(key);
    // Once one entry is not the fast lane's, the rest are not looked up (nor parsed by shape).
    const operation =
      key === undefined || runnable === undefined
        ? undefined
        : runnableOf(entry, key, entry.variables ?? {}, options.lanes);
    // Reads only: a batch that may hold a mutation runs its entries in order, in Yoga's lane.
    if (operation === undefined || operation.named.operationType !== 'query') runnable = undefined;
    else runnable?.push(operation);
  }
  return { runnable, keys };
}

/** The batch's answer: one JSON array, with the headers Yoga's answer carries. */
function writeArray(
  req: IncomingMessage,
  res: ServerResponse,
  results: readonly ExecutionResult[],
  costs: ReadonlyArray<CostReport | undefined> | undefined,
  learned: readonly string[],
  requestId: RequestId,
  options: FastLaneOptions,
): void {
  let total: CostReport | undefined;
  const entries = results.map((result, index) => {
    const cost = costs?.[index];
    if (cost === undefined) return JSON.stringify(result);
    total = addCost(total, cost);
    return JSON.stringify(withCost(result, cost));
  });
  const extra = total && costHeaders(total);
  writeAnswer(req, res, `[${entries.join(',')}]`, learned, 'query', extra, requestId, options);
  options.lanes.served.fast++;
}

/** A line and a count per entry, as Yoga's lane writes them (answer.ts recordOperation). */
function logAndCount(
  req: IncomingMessage,
  prepared: readonly Named[],
  calls: readonly EntryCalls[],
  costs: ReadonlyArray<CostReport | undefined> | undefined,
  requestIds: readonly RequestId[],
  started: number,
  executeSeconds: number,
  gone: boolean,
  options: FastLaneOptions,
): void {
  const size = prepared.length;
  const clientAddress = options.clientAddress(req);
  options.metrics?.batch(size);
  for (const [index, operation] of prepared.entries()) {
    const cost = costs?.[index];
    const used = {
      upstreamCalls: () => calls[index]?.own ?? 0,
      sharedUpstreamCalls: () => calls[index]?.shared ?? 0,
      ...(cost ? { cost } : {}),
    };
    const id = requestIds[index] as RequestId;
    const entry = { index, size };
    const status = gone ? CLIENT_GONE_STATUS : 200;
    recordOperation(req, operation, used, started, executeSeconds, id, status, options, entry, clientAddress);
  }
}
