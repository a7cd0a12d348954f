import type { Logger } from 'pino';
import { CODES } from '../codes.ts';
import { MAX_OPERATION_NAME } from './labels.ts';
import { lineFrameOf, timeField } from './logging.ts';
import type { RequestId } from './request-id.ts';

/** What the operation log line says about one operation; both lanes fill one. */
export interface OperationRecord {
  started: number;
  requestId: RequestId;
  /** The client's address: the peer, or the client a trusted proxy forwarded. */
  clientAddress: string;
  operationName?: string;
  operationType?: 'query' | 'mutation' | 'subscription';
  codes?: string[];
  upstreamCalls?: () => number;
  /**
   * Of `upstreamCalls`, the calls another operation of the batch asked for too (each is on the
   * line of every entry that asked for it); written when there are any.
   */
  sharedUpstreamCalls?: () => number;
  /** Where the operation stood in a batched request; undefined for a single request. */
  batch?: { readonly index: number; readonly size: number; readonly shared?: boolean };
  /** The client went away before the answer was written (outcome `client_gone`). */
  clientGone?: boolean;
  /** What it cost (policy/cost.ts), when COST_REPORT=on and it was priced. */
  cost?: () => { readonly estimated: number; readonly actual?: number } | undefined;
}

/** The status logged for an operation whose client went away: nginx's "client closed request". */
export const CLIENT_GONE_STATUS = CODES.CLIENT_GONE.status;

/**
 * Writes the operation's log line; never a header, a variable or a token. Its fields are written
 * once, as JSON text (operationFields), and the line is the one pino writes for them: a logger
 * `createLogger` made gets the text framed as pino frames its lines (lineFrameOf) and written to
 * its destination, since one line goes out per request and pino's object-to-JSON path costs more
 * than the line's own text; any other logger (a child) gets the same fields as an object, through
 * pino.
 */
export function logOperation(logger: Logger, record: OperationRecord, status: number): void {
  if (!logger.isLevelEnabled('info')) return;
  const fields = operationFields(record, status);
  const frame = lineFrameOf(logger);
  if (frame === undefined) {
    logger.info(JSON.parse(`{${fields}}`) as object, 'operation');
    return;
  }
  frame.destination.write(
    `{"level":${logger.levels.values.info}${timeField()}${frame.bindings},${fields},"msg":"operation"}\n`,
  );
}

/** The line's own fields, in their order, as JSON text without the braces. */
function operationFields(record: OperationRecord, status: number): string {
  const durationMs = Math.round((performance.now() - record.started) * 100) / 100;
  const upstreamCalls = record.upstreamCalls?.() ?? 0;
  const sharedCalls = record.sharedUpstreamCalls?.() ?? 0;
  const shared = sharedCalls > 0 ? `,"upstreamCallsShared":${sharedCalls}` : '';
  const name =
    record.operationName === undefined
      ? 'null'
      : JSON.stringify(record.operationName.slice(0, MAX_OPERATION_NAME));
  const type = record.operationType === undefined ? 'null' : `"${record.operationType}"`;
  // A client gone read none of its answer's errors: the outcome says what happened, in every lane.
  const codes = record.codes && !record.clientGone ? `,"codes":${JSON.stringify(record.codes)}` : '';
  const batch = record.batch ? `,"batch":{"index":${record.batch.index},"size":${record.batch.size}}` : '';
  const priced = record.cost?.();
  const cost = priced
    ? `,"cost":{"estimated":${priced.estimated}${priced.actual === undefined ? '' : `,"actual":${priced.actual}`}}`
    : '';
  // The request id (a RequestId) and the operation type (one of three words) need no escaping;
  // the address may come from a header, so it is escaped.
  return `"requestId":"${record.requestId}","clientAddress":${JSON.stringify(record.clientAddress)},"operationName":${name},"operationType":${type},"durationMs":${durationMs},"upstreamCalls":${upstreamCalls}${shared},"status":${status},"outcome":"${outcomeOf(record)}"${codes}${batch}${cost}`;
}

function outcomeOf(record: OperationRecord): 'ok' | 'error' | 'client_gone' {
  return record.clientGone ? 'client_gone' : record.codes ? 'error' : 'ok';
}
