import type { ExecutionResult } from 'graphql';
import { actualCost } from '../execution/cost.ts';
import { priceOperation } from '../execution/plan.ts';
import { runPlan } from '../execution/run-plan.ts';
import type { CostReport } from '../policy/cost.ts';
import { isText, type Lanes, type PreparedOperation } from '../policy/prepared-operations.ts';
import type { Context } from '../schema/context.ts';
import type { Named } from './answer.ts';
import { type ByShape, preparedByShape } from './by-shape.ts';
import { type OneCall, oneCallOf } from './one-call.ts';
import type { PlainParams } from './plain-request.ts';

export type { Named } from './answer.ts';

/** An operation the fast lane can run: what it is named by, and how it runs on a context. */
export interface Runnable {
  readonly named: Named;
  /**
   * Runs it on the request's context: undefined when its plan steps aside and no compiled form
   * exists (an operation found by shape), so Yoga runs the document on that context.
   */
  readonly execute: (context: Context, planned: { count: number }) => Promise<ExecutionResult | undefined>;
  /** When its plan is one `GET /pets`: what one-call.ts needs to answer it without a context. */
  readonly oneCall?: OneCall | undefined;
  /**
   * What it cost (policy/cost.ts), priced as Yoga's lane prices it: the estimate, and the actual of
   * the answer's `data` when there is one (none when its client went before the calls ended).
   */
  readonly cost: (data?: unknown) => CostReport | undefined;
}

/**
 * What the fast lane runs for one operation's parameters, both of its paths (one operation, a
 * batch's entries): the prepared operation under `key`, else, for a text not seen before, the
 * plan of its shape; undefined when neither exists (Yoga runs it, and may prepare it).
 */
export function runnableOf(
  params: PlainParams,
  key: string,
  variables: Record<string, unknown>,
  lanes: Lanes,
): Runnable | undefined {
  const prepared = lanes.prepared.get(key);
  if (prepared) {
    const estimate = once(() => prepared.price(variables));
    return {
      named: prepared,
      execute: (context, planned) => runPrepared(prepared, context, variables, planned),
      oneCall: oneCallOf(prepared.plan),
      cost: (data) => reportOf(estimate(), data, () => prepared.actual(data, variables)),
    };
  }
  const byShape =
    lanes.shapes && isText(key)
      ? preparedByShape(lanes.shapes, params.query as string, params.operationName)
      : undefined;
  if (byShape === undefined) return undefined;
  const { plan } = byShape.operation;
  const estimate = once(() => plan.fixedCost ?? priceOperation(plan.schema, plan.document, variables));
  return {
    named: byShape.operation,
    execute: (context, planned) => runByShape(byShape, context, variables, planned),
    cost: (data) =>
      reportOf(estimate(), data, () =>
        actualCost(plan.schema, plan.document, data, variables, undefined, byShape.names),
      ),
  };
}

/**
 * A request's estimate, priced when first asked: with a budget it is asked before the run (the
 * charge) and again with the answer (the report), for the same variables.
 */
function once(price: () => number | undefined): () => number | undefined {
  let priced = false;
  let value: number | undefined;
  return () => {
    if (!priced) {
      value = price();
      priced = true;
    }
    return value;
  };
}

function reportOf(
  estimated: number | undefined,
  data: unknown,
  actual: () => number | undefined,
): CostReport | undefined {
  if (estimated === undefined) return undefined;
  return data === undefined ? { estimated } : { estimated, actual: actual() ?? estimated };
}

/**
 * Runs a prepared operation: its plan when it has one and the plan can answer, else its compiled
 * form; `planned` counts the operations a plan answered. Both of the fast lane's paths (one
 * operation, a batch's entries) run through it. Undefined for an operation over the cost limit:
 * a plan refuses it itself (run-plan.ts prices it), compiled execution prices nothing, so it is
 * priced here before that path, and Yoga's lane words the refusal (yoga/request/cost.ts).
 */
async function runPrepared(
  operation: PreparedOperation,
  context: Context,
  variables: Record<string, unknown>,
  planned: { count: number },
): Promise<ExecutionResult | undefined> {
  if (operation.plan) {
    const data = await runPlan(operation.plan, context, variables);
    if (data !== undefined) {
      planned.count++;
      return { data };
    }
    // The compiled path runs the same operation with the same context: what the plan received
    // is in the loaders' memo, and any POST it made is answered again, not sent again.
    context.loaders.replay();
  }
  if ((operation.price(variables) ?? Number.POSITIVE_INFINITY) > context.maxCost) return undefined;
  return operation.compiled.query(undefined, context, variables) as Promise<ExecutionResult>;
}

/**
 * Runs the plan of an operation found by shape (fast-lane/by-shape.ts), its answer written under
 * the document's own names. Undefined when the plan steps aside: no compiled form exists for this
 * document, so Yoga runs it on the same context, and any POST the plan made is answered again
 * there, not sent again.
 */
async function runByShape(
  byShape: ByShape,
  context: Context,
  variables: Record<string, unknown>,
  planned: { count: number },
): Promise<ExecutionResult | undefined> {
  const data = await runPlan(byShape.operation.plan, context, variables, byShape.names);
  if (data === undefined) {
    context.loaders.replay();
    return undefined;
  }
  planned.count++;
  return { data };
}
