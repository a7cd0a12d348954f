import { type ExecutionArgs, getOperationAST, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { CompiledExecution } from '../execution/compiled.ts';
import { actualCost, estimateCost } from '../execution/cost.ts';
import { compilePlan, type Plan } from '../execution/plan.ts';
import { documentShape } from '../execution/shape.ts';
import type { LaneContext } from '../policy/hand-off.ts';
import {
  type Lanes,
  PER_ANSWER_HEADERS,
  type PreparedOperation,
  type ShapedOperation,
  shapeKey,
} from '../policy/prepared-operations.ts';

/** The one form the fast lane writes: a JSON body (never SSE or multipart/mixed parts). */
const JSON_ANSWER = /^application\/(graphql-response\+)?json\b/i;

/**
 * What one operation Yoga ran may be kept as: prepared under its key (once graphql-jit compiled
 * it), its plan under its shape's key (once a document of that shape ran the second time).
 */
interface Ready {
  key: string;
  operation?: PreparedOperation;
  shaped?: { key: string; value: ShapedOperation };
}

/**
 * Keeps what Yoga learned from a request the edge marked as a fast-lane candidate (see
 * `HandOff.toPrepare`, and `toPrepareBatch` for a batch's entries): once its operations ran
 * without errors and compiled, the fast lane serves them.
 */
export function usePreparation(
  lanes: Lanes,
  compiled: CompiledExecution,
  batchEntryOf: (context: object) => { readonly index: number } | undefined = () => undefined,
): Plugin {
  const ready = new WeakMap<Request, Ready[]>();
  return {
    onExecute({ args }) {
      const { lane, request } = args.contextValue as LaneContext & { request?: Request };
      if (request === undefined || lane === undefined) return;
      const index = batchEntryOf(args.contextValue as object)?.index;
      const key = index === undefined ? lane.toPrepare?.operation : lane.toPrepareBatch?.operations[index];
      if (key === undefined) return;
      return {
        onExecuteDone({ result }) {
          if (!('data' in result) || result.errors?.length || result.data == null) return;
          const operation = getOperationAST(args.document, args.operationName);
          if (!operation) return;
          const entry = readyOf(lanes, compiled, args, operation, key);
          if (entry === undefined) return;
          const list = ready.get(request);
          if (list) list.push(entry);
          else ready.set(request, [entry]);
        },
      };
    },
    // Last of all plugins, so every header Yoga and the other plugins set is on the response.
    onResponse({ request, response, serverContext }) {
      const list = ready.get(request);
      const { lane } = serverContext as LaneContext;
      const headersKey = lane?.toPrepare?.headers ?? lane?.toPrepareBatch?.headers;
      if (!list || headersKey === undefined || response.status !== 200) return;
      // Yoga answers a plain result in parts too, when Accept asks for SSE or multipart/mixed
      // only: those headers over the fast lane's JSON body would be another answer (or no valid
      // HTTP at all, with both Content-Length and chunked Transfer-Encoding).
      if (!JSON_ANSWER.test(response.headers.get('content-type') ?? '')) return;
      const headers: string[] = [];
      response.headers.forEach((value, name) => {
        if (!PER_ANSWER_HEADERS.has(name)) headers.push(name, value);
      });
      lanes.headers.set(headersKey, headers);
      for (const { key, operation, shaped } of list) {
        if (operation) lanes.prepared.set(key, operation);
        if (shaped) lanes.shapes?.planned.set(shaped.key, shaped.value);
      }
    },
  };
}

/**
 * The operation's estimated cost for a request's variables: priced once, here, when it has none
 * (most prepared operations), so serving it costs a comparison.
 */
function priceOf(
  args: ExecutionArgs,
  operation: OperationDefinitionNode,
): (variables: Record<string, unknown>) => number | undefined {
  const price = (variables: Record<string, unknown>) =>
    estimateCost(args.schema, args.document, variables, args.operationName);
  if (operation.variableDefinitions?.length) return price;
  const fixed = price({});
  return () => fixed;
}

/** What a successful run of `operation` may be kept as (see Ready); undefined: nothing yet. */
function readyOf(
  lanes: Lanes,
  compiled: CompiledExecution,
  args: ExecutionArgs,
  operation: OperationDefinitionNode,
  key: string,
): Ready | undefined {
  let plan: Plan | undefined;
  let planned = false;
  const planOnce = () => {
    if (!planned && lanes.planning) plan = compilePlan(args.schema, args.document, args.operationName);
    planned = true;
    return plan;
  };
  const query = compiled.compiledFor(args.document, args.operationName);
  const entry: Ready = { key };
  if (query) {
    entry.operation = {
      compiled: query,
      plan: planOnce(),
      operationType: operation.operation,
      operationName: operation.name?.value,
      price: priceOf(args, operation),
      actual: (data, variables) =>
        actualCost(args.schema, args.document, data, variables, args.operationName),
    };
  }
  const shapes = lanes.shapes;
  const shape = shapes && documentShape(args.document);
  if (shapes && shape) {
    const shapedKey = shapeKey(args.operationName, shape.key);
    const due = query !== undefined || shapes.seen.get(shapedKey) === true;
    if (!due) shapes.seen.set(shapedKey, true);
    const shapePlan = due && shapes.planned.get(shapedKey) === undefined ? planOnce() : undefined;
    if (shapePlan) {
      entry.shaped = {
        key: shapedKey,
        value: {
          plan: shapePlan,
          operationType: shapePlan.operation,
          operationName: operation.name?.value,
          names: shape.names,
        },
      };
    }
  }
  return entry.operation || entry.shaped ? entry : undefined;
}
