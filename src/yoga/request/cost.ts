import { isAsyncIterable, mergeIncrementalResult } from '@graphql-tools/utils';
import {
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLError,
  getOperationAST,
  getVariableValues,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { actualCost, estimateCost } from '../../execution/cost.ts';
import { addCost, type CostReport, costHeaders, settledCost, withCost } from '../../policy/cost.ts';
import type { CostBudget, TakenCharge } from '../../policy/cost-budget.ts';
import type { LaneContext } from '../../policy/hand-off.ts';
import { refusalOf } from '../../policy/rate-limit.ts';
import type { Context } from '../../schema/context.ts';
import { costLimitExceeded } from '../../schema/errors.ts';
import { liveOperation } from '../../schema/live.ts';

/**
 * The operation's cost (execution/cost.ts): estimated before it runs, and refused above the
 * request's `maxCost` (infinite under COST_MODE=measure) with COST_LIMIT_EXCEEDED before any
 * resolver, so before any upstream call; a subscription before its live list opens. With a budget
 * (COST_BUDGET_PER_MINUTE), the estimate is then charged to the caller, refused RATE_LIMITED past
 * it, and refunded down to the actual once known. With COST_REPORT=on, the answer says what it
 * cost (policy/cost.ts): the estimate, the actual and the budget left in `extensions.cost`, and in
 * headers when the answer is one body. An answer in parts carries the estimate in its first part
 * and the actual, of everything sent, in its last; a subscription's events and a live query's
 * results each carry their own.
 */
export function useCost(
  report: boolean,
  options: {
    /** What must be refused before the price, more precisely (the subgraph's representation count). */
    before?: (args: ExecutionArgs) => void;
    budget?: CostBudget;
    /** A batch entry's place, for the charge the fast lane made for it. */
    batchEntryOf?: (context: object) => { readonly index: number } | undefined;
  } = {},
): Plugin {
  const { before, budget, batchEntryOf } = options;
  // The charge the fast lane made before handing the request (or this batch entry) over.
  const handedCharge = (context: CostContext) => {
    const lane = context.lane;
    if (lane?.charged) return lane.charged;
    const entry = lane?.batch?.charges && batchEntryOf?.(context);
    return entry ? lane?.batch?.charges?.[entry.index] : undefined;
  };
  // A budget's charge is settled to the actual cost, which the report prices.
  const reporting = report || budget !== undefined;
  const headersFor = new WeakMap<Request, CostReport>();
  // What the answer's headers say: the request's operations' costs added up (a batch's entries).
  const noteFor = (args: ExecutionArgs, cost: CostReport) => {
    const context = args.contextValue as CostContext;
    context.cost = cost;
    if (context.request) headersFor.set(context.request, addCost(headersFor.get(context.request), cost));
  };
  const estimate = async (
    args: ExecutionArgs,
    stop: (result: ExecutionResult) => void,
  ): Promise<Priced | undefined> => {
    try {
      before?.(args);
    } catch (error) {
      stop({ data: null, errors: [error as GraphQLError] });
      return undefined;
    }
    const context = args.contextValue as unknown as CostContext;
    // Variables graphql-js will refuse are its to word: only a request that can run is priced, and
    // one the fast lane charged for costs nothing (the least a charge is).
    if (!coercible(args)) {
      const charged = handedCharge(context);
      if (charged && !charged.limited) charged.settle(0);
      return undefined;
    }
    const estimated = estimateCost(args.schema, args.document, args.variableValues ?? {}, args.operationName);
    if (estimated === undefined) return undefined;
    if (estimated > context.maxCost) {
      // `data: null`, as an operation refused in its first root field was answered before.
      stop({ data: null, errors: [costLimitExceeded(estimated, context.maxCost)] });
      return undefined;
    }
    // The fast lane charged it already when it hands the request over.
    const charge =
      budget &&
      (handedCharge(context) ?? (await budget.charge(context.req, context.authorization, estimated)));
    if (charge?.limited) {
      const cost = { estimated, throttleStatus: charge.status };
      noteFor(args, cost);
      stop({ data: null, errors: [refusalOf(charge)], extensions: { cost } });
      return undefined;
    }
    return { estimated, charge };
  };
  const actualOf = (args: ExecutionArgs, data: unknown) =>
    actualCost(args.schema, args.document, data, args.variableValues ?? {}, args.operationName);
  const settled = (args: ExecutionArgs, priced: Priced, data: unknown) =>
    settledCost(priced.estimated, actualOf(args, data), priced.charge);
  // A stream of whole results (a subscription's events, a live query's results): charged its
  // estimate as it opens, never refunded (its line is written then); each result says what it
  // cost, the first also what the budget held then.
  const eachResult = (args: ExecutionArgs, priced: Priced) => {
    const { estimated } = priced;
    const opened = settledCost(estimated, undefined, priced.charge);
    (args.contextValue as unknown as CostContext).cost = opened;
    let throttleStatus = opened.throttleStatus;
    return ({
      result,
      setResult,
    }: {
      result: ExecutionResult;
      setResult: (result: ExecutionResult) => void;
    }) => {
      const actual = actualOf(args, result.data) ?? estimated;
      setResult(withCost(result, { estimated, actual, ...(throttleStatus ? { throttleStatus } : {}) }));
      throttleStatus = undefined;
    };
  };
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const priced = await estimate(args, setResultAndStopExecution);
      if (!reporting || priced === undefined) return;
      const { estimated } = priced;
      return {
        onExecuteDone({ result, setResult }) {
          if (!isAsyncIterable(result)) {
            const cost = settled(args, priced, result.data);
            noteFor(args, cost);
            setResult(withCost(result, cost));
            return;
          }
          if (liveOperation(args)) return { onNext: eachResult(args, priced) };
          noteFor(args, { estimated });
          let merged: (ExecutionResult & { hasNext?: boolean }) | undefined;
          return {
            onNext({ result: part, setResult: setPart }) {
              const first = merged === undefined;
              if (first) merged = { ...part };
              else
                mergeIncrementalResult({
                  incrementalResult: part,
                  executionResult: merged as ExecutionResult,
                });
              const last = (part as { hasNext?: boolean }).hasNext === false;
              if (first && !last) setPart(withCost(part, { estimated }));
              else if (last) {
                const cost = settled(args, priced, merged?.data);
                (args.contextValue as unknown as CostContext).cost = cost;
                setPart(withCost(part, cost));
              }
            },
          };
        },
      };
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      const priced = await estimate(args, setResultAndStopExecution);
      if (!reporting || priced === undefined) return;
      const onNext = eachResult(args, priced);
      return { onSubscribeResult: () => ({ onNext }) };
    },
    onResponse({ request, response }) {
      const cost = headersFor.get(request);
      if (!cost) return;
      const headers = costHeaders(cost);
      for (let i = 0; i < headers.length; i += 2)
        response.headers.set(headers[i] as string, headers[i + 1] as string);
    },
  };
}

/** An operation's estimate, and its charge to the caller's budget when there is one. */
interface Priced {
  readonly estimated: number;
  readonly charge: TakenCharge | undefined;
}

/** What a cost plugin reads of the context: the request's, Yoga's server context and the lane's. */
type CostContext = Context & LaneContext & { request?: Request };

function coercible(args: ExecutionArgs): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation?.variableDefinitions?.length) return true;
  const given = (args.variableValues ?? {}) as Record<string, unknown>;
  return !getVariableValues(args.schema, operation.variableDefinitions, given).errors;
}
