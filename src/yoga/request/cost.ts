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
import { addCost, type CostReport, costHeaders, withCost } from '../../policy/cost.ts';
import type { Context } from '../../schema/context.ts';
import { costLimitExceeded } from '../../schema/errors.ts';

/**
 * The operation's cost (execution/cost.ts): estimated before it runs, and refused above the
 * request's `maxCost` (infinite under COST_MODE=measure) with COST_LIMIT_EXCEEDED before any
 * resolver, so before any upstream call; a subscription before its live list opens. With
 * COST_REPORT=on, the answer says what it cost (policy/cost.ts): the estimate and the actual in
 * `extensions.cost`, and in headers when the answer is one body. An answer in parts carries the
 * estimate in its first part and the actual, of everything sent, in its last; a subscription's
 * events each carry their own.
 */
export function useCost(
  report: boolean,
  /** What must be refused before the price, more precisely (the subgraph's representation count). */
  before?: (args: ExecutionArgs) => void,
): Plugin {
  const headersFor = new WeakMap<Request, CostReport>();
  const estimate = (args: ExecutionArgs, stop: (result: ExecutionResult) => void) => {
    try {
      before?.(args);
    } catch (error) {
      stop({ data: null, errors: [error as GraphQLError] });
      return undefined;
    }
    // Variables graphql-js will refuse are its to word: only a request that can run is priced.
    if (!coercible(args)) return undefined;
    const estimated = estimateCost(args.schema, args.document, args.variableValues ?? {}, args.operationName);
    const { maxCost } = args.contextValue as Context;
    if (estimated !== undefined && estimated > maxCost) {
      // `data: null`, as an operation refused in its first root field was answered before.
      stop({ data: null, errors: [costLimitExceeded(estimated, maxCost)] });
      return undefined;
    }
    return estimated;
  };
  const actualOf = (args: ExecutionArgs, data: unknown) =>
    actualCost(args.schema, args.document, data, args.variableValues ?? {}, args.operationName);
  // What the answer's headers say: the request's operations' costs added up (a batch's entries).
  const noteFor = (args: ExecutionArgs, cost: CostReport) => {
    const context = args.contextValue as Context & { request?: Request };
    context.cost = cost;
    if (context.request) headersFor.set(context.request, addCost(headersFor.get(context.request), cost));
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const estimated = estimate(args, setResultAndStopExecution);
      if (!report || estimated === undefined) return;
      return {
        onExecuteDone({ result, setResult }) {
          if (!isAsyncIterable(result)) {
            const cost = { estimated, actual: actualOf(args, result.data) ?? estimated };
            noteFor(args, cost);
            setResult(withCost(result, cost));
            return;
          }
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
                const cost = { estimated, actual: actualOf(args, merged?.data) ?? estimated };
                (args.contextValue as unknown as Context).cost = cost;
                setPart(withCost(part, cost));
              }
            },
          };
        },
      };
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const estimated = estimate(args, setResultAndStopExecution);
      if (!report || estimated === undefined) return;
      // Its log line is written when it opens: each event carries its own actual.
      (args.contextValue as unknown as Context).cost = { estimated };
      return {
        onSubscribeResult() {
          return {
            onNext({ result, setResult }) {
              setResult(withCost(result, { estimated, actual: actualOf(args, result.data) ?? estimated }));
            },
          };
        },
      };
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

function coercible(args: ExecutionArgs): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation?.variableDefinitions?.length) return true;
  const given = (args.variableValues ?? {}) as Record<string, unknown>;
  return !getVariableValues(args.schema, operation.variableDefinitions, given).errors;
}
