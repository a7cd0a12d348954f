import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { CompiledExecution } from '../execution/compiled.ts';
import { compilePlan } from '../execution/plan.ts';
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

/** What one operation Yoga ran may be prepared as, under its key (and its shape's, with a plan). */
interface Ready {
  key: string;
  operation: PreparedOperation;
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
          const query = compiled.compiledFor(args.document, args.operationName);
          const operation = getOperationAST(args.document, args.operationName);
          if (!query || !operation) return;
          const plan = lanes.planning
            ? compilePlan(args.schema, args.document, args.operationName)
            : undefined;
          const prepared: PreparedOperation = {
            compiled: query,
            plan,
            operationType: operation.operation,
            operationName: operation.name?.value,
          };
          const entry: Ready = { key, operation: prepared };
          const shape = plan && lanes.shapes && documentShape(args.document);
          if (plan && shape) {
            entry.shaped = {
              key: shapeKey(args.operationName, shape.key),
              value: { operation: { ...prepared, plan }, names: shape.names },
            };
          }
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
        lanes.prepared.set(key, operation);
        if (shaped) lanes.shapes?.set(shaped.key, shaped.value);
      }
    },
  };
}
