import type { IncomingMessage } from 'node:http';
import type { DefinitionNode, DocumentNode, ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { CODES } from '../codes.ts';
import { MAX_OPERATION_NAME } from './labels.ts';
import type { Metrics } from './metrics.ts';
import { CLIENT_GONE_STATUS, logOperation, type OperationRecord } from './operation-line.ts';
import { requestIdOf } from './request-id.ts';

type BatchEntryOf = (
  context: object,
) => { readonly index: number; readonly size: number; readonly shared: boolean } | undefined;

/**
 * One log line per GraphQL operation: request id (the caller's `x-request-id` when it is sane, else
 * a new one, echoed in the response), client address, operation name and type, duration, upstream
 * calls made, the HTTP status, and the error codes if any. Never a header, a variable or a token.
 * Each operation of a batch has its own line, with its place in the batch, its own status (the
 * highest its errors ask for, else 200) and the upstream calls it asked for (a call entries shared
 * on each of their lines, and in `upstreamCallsShared`). An operation whose client went away
 * before the answer is logged with status 499 and outcome `client_gone`.
 */
export function useOperationLog(
  logger: Logger,
  clientAddress: (req: IncomingMessage) => string = (req) => req.socket.remoteAddress ?? '',
  batchEntryOf: BatchEntryOf = () => undefined,
  metrics?: Pick<Metrics, 'cost'>,
): Plugin {
  // Per operation, under its context (a batch's entries each have their own); per request, the
  // operations whose lines go out with its answer.
  const records = new WeakMap<object, OperationRecord>();
  const byRequest = new WeakMap<Request, OperationRecord[]>();
  const statuses = new WeakMap<OperationRecord, number>();
  return {
    onParams({ request, params, context }) {
      const req = (context as { req?: IncomingMessage }).req;
      const batch = batchEntryOf(context);
      const record: OperationRecord = {
        started: performance.now(),
        requestId: requestIdOf(request.headers.get('x-request-id')),
        clientAddress: req ? clientAddress(req) : '',
        ...(typeof params.operationName === 'string'
          ? { operationName: params.operationName.slice(0, MAX_OPERATION_NAME) }
          : {}),
        ...(batch ? { batch } : {}),
      };
      records.set(context, record);
      const list = byRequest.get(request);
      if (list) list.push(record);
      else byRequest.set(request, [record]);
    },
    // A subscription runs through subscribe, not execute: its line names it the same way.
    onExecute: ({ args }) => noteOperation(records, args),
    onSubscribe: ({ args }) => noteOperation(records, args),
    onResultProcess({ request, result }) {
      const list = byRequest.get(request);
      if (!list) return;
      for (const record of list) {
        const own = Array.isArray(result) ? result[record.batch?.index ?? -1] : result;
        const errors = own && 'errors' in own ? (own as ExecutionResult).errors : undefined;
        if (!errors?.length) continue;
        const codes = errors.map((error: GraphQLError) =>
          String(error.extensions?.code ?? CODES.INTERNAL_SERVER_ERROR.code),
        );
        record.codes = [...new Set(codes)].slice(0, 10);
        if (record.batch) statuses.set(record, statusOf(errors));
      }
    },
    onResponse({ request, response }) {
      const list = byRequest.get(request);
      if (!list?.[0]) return;
      response.headers.set('x-request-id', list[0].requestId);
      // The adapter aborts the request's signal when its client leaves before the answer is out.
      const gone = request.signal.aborted;
      for (const record of list) {
        if (gone) record.clientGone = true;
        logOperation(logger, record, gone ? CLIENT_GONE_STATUS : (statuses.get(record) ?? response.status));
        const cost = record.cost?.();
        if (cost) metrics?.cost(record.operationType, cost);
      }
    },
  };
}

/** The status one operation of a batch would have had alone: the highest its errors ask for. */
function statusOf(errors: readonly GraphQLError[]): number {
  let status = 200;
  for (const error of errors) {
    const asked = (error.extensions?.http as { status?: number } | undefined)?.status;
    if (asked !== undefined && asked > status) status = asked;
  }
  return status;
}

/** The operation's type and name, and its upstream calls, on the record of its context. */
function noteOperation(
  records: WeakMap<object, OperationRecord>,
  args: { contextValue: unknown; document: unknown; operationName?: string | null | undefined },
): void {
  const context = args.contextValue as {
    upstreamCalls?: () => number;
    sharedUpstreamCalls?: () => number;
    cost?: { readonly estimated: number; readonly actual?: number };
  };
  const record = records.get(context);
  if (!record) return;
  const operation = (args.document as DocumentNode).definitions.find(
    (definition: DefinitionNode) =>
      definition.kind === 'OperationDefinition' &&
      (args.operationName == null || definition.name?.value === args.operationName),
  );
  if (operation?.kind === 'OperationDefinition') {
    record.operationType = operation.operation;
    if (operation.name) record.operationName = operation.name.value;
  }
  if (context.upstreamCalls) record.upstreamCalls = context.upstreamCalls;
  if (context.sharedUpstreamCalls) record.sharedUpstreamCalls = context.sharedUpstreamCalls;
  record.cost = () => context.cost;
}
