import type { ExecutionResult } from 'graphql';
import { runPlan } from '../execution/run-plan.ts';
import type { PreparedOperation } from '../policy/prepared-operations.ts';
import type { Context } from '../schema/context.ts';
import type { ByShape } from './by-shape.ts';

/**
 * Runs a prepared operation: its plan when it has one and the plan can answer, else its compiled
 * form; `planned` counts the operations a plan answered. Both of the fast lane's paths (one
 * operation, a batch's entries) run through it.
 */
export async function runPrepared(
  operation: PreparedOperation,
  context: Context,
  variables: Record<string, unknown>,
  planned: { count: number },
): Promise<ExecutionResult> {
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
  return operation.compiled.query(undefined, context, variables) as Promise<ExecutionResult>;
}

/**
 * Runs the plan of an operation found by shape (fast-lane/by-shape.ts), its answer written under
 * the document's own names. Undefined when the plan steps aside: no compiled form exists for this
 * document, so Yoga runs it on the same context, and any POST the plan made is answered again
 * there, not sent again.
 */
export async function runByShape(
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
