import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DefinitionNode, DocumentNode, GraphQLError } from 'graphql';
import type { Plugin, YogaLogger } from 'graphql-yoga';
import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * The gateway's JSON logger. `authorization` is redacted where a header bag would carry it, as a
 * second line of defence: no code path logs headers or tokens in the first place. Explicit paths,
 * no wildcards: pino's redaction walks every top-level key for a `*` path, which doubled the cost of
 * the log line written for every operation (7.3 against 3.6 µs).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const logger = pino(
    {
      level,
      base: { service: 'pet-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'authorization',
          'headers.authorization',
          'req.headers.authorization',
          'request.headers.authorization',
          'err.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? createLogDestination(),
  );
  plainLoggers.add(logger);
  return logger;
}

/**
 * stdout for the logs, written at most once per event-loop turn (and whenever 8 KB are waiting):
 * a line per request written on its own cost a write syscall per request, ~7% of the CPU of a
 * request the fast lane answers (profile in docs/performance.md). A line waits at most until the
 * current turn ends, so logs stay as timely as before, and `flushSync` empties it at shutdown.
 */
export function createLogDestination(fd = 1): DestinationStream & {
  flush(callback?: (error?: Error) => void): void;
  flushSync(): void;
} {
  // sonic-boom writes synchronously (retrying EAGAIN on a full pipe); the lines wait here, not in
  // sonic-boom's own buffer, whose flushSync also fsyncs: once per turn, that would be an fsync per
  // turn for a log file.
  const boom = pino.destination({ dest: fd, sync: true });
  let waiting = '';
  let scheduled = false;
  const flushSync = () => {
    scheduled = false;
    if (waiting === '') return;
    const text = waiting;
    waiting = '';
    boom.write(text);
  };
  // Whatever way the process ends (a forced exit after the drain timeout, a crash), the lines of
  // its last turn are written.
  if (unflushed.size === 0)
    process.once('exit', () => {
      for (const flush of unflushed) flush();
    });
  unflushed.add(flushSync);
  return {
    write(line: string) {
      waiting += line;
      if (waiting.length >= FLUSH_AT) flushSync();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flushSync);
      }
    },
    flush(callback) {
      flushSync();
      callback?.();
    },
    flushSync,
  };
}

/** Characters of log lines written at once at most, before the turn ends. */
const FLUSH_AT = 8192;

const unflushed = new Set<() => void>();

/**
 * Loggers made by `createLogger`: no hooks, formatters, mixins or custom keys, so the operation line
 * can be written as the text pino would write, without pino building and serialising an object.
 */
const plainLoggers = new WeakSet<Logger>();

/** Routes Yoga's own messages (masked unexpected errors among them) into the same JSON logs. */
export function yogaLogger(logger: Logger): YogaLogger {
  return {
    debug: (...args: unknown[]) => logger.debug({ args }, 'yoga'),
    info: (...args: unknown[]) => logger.info({ args }, 'yoga'),
    warn: (...args: unknown[]) => logger.warn({ args }, 'yoga'),
    error: (...args: unknown[]) =>
      logger.error(
        { err: args.find((arg) => arg instanceof Error) },
        String(args.find((arg) => typeof arg === 'string') ?? 'yoga error'),
      ),
  };
}

/** What the operation log line says about one operation; both lanes fill one. */
export interface OperationRecord {
  started: number;
  requestId: string;
  /** The client's address: the peer, or the client a trusted proxy forwarded. */
  clientAddress: string;
  operationName?: string;
  operationType?: string;
  codes?: string[];
  upstreamCalls?: () => number;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The caller's `x-request-id` when it is sane, else a new one. */
export function requestIdOf(header: string | null | undefined): string {
  return header && REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * Writes the operation's log line; never a header, a variable or a token. The line is the one pino
 * writes for these fields (level, time, the logger's bindings, the fields, msg), built as text: one
 * is written per request, and pino's object-to-JSON path was the largest single cost of a request
 * the fast lane answers (docs/performance.md).
 */
export function logOperation(logger: Logger, record: OperationRecord, status: number): void {
  const durationMs = Math.round((performance.now() - record.started) * 100) / 100;
  const upstreamCalls = record.upstreamCalls?.() ?? 0;
  if (!plainLoggers.has(logger)) {
    logger.info(
      {
        requestId: record.requestId,
        clientAddress: record.clientAddress,
        operationName: record.operationName ?? null,
        operationType: record.operationType ?? null,
        durationMs,
        upstreamCalls,
        status,
        outcome: record.codes ? 'error' : 'ok',
        ...(record.codes ? { codes: record.codes } : {}),
      },
      'operation',
    );
    return;
  }
  if (!logger.isLevelEnabled('info')) return;
  const name = record.operationName === undefined ? 'null' : JSON.stringify(record.operationName);
  const type = record.operationType === undefined ? 'null' : JSON.stringify(record.operationType);
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
  stream?.write(
    `{"level":${logger.levels.values.info},"time":"${new Date().toISOString()}"${bindings}` +
      `,"requestId":${JSON.stringify(record.requestId)},"clientAddress":${JSON.stringify(record.clientAddress)}` +
      `,"operationName":${name},"operationType":${type}` +
      `,"durationMs":${durationMs},"upstreamCalls":${upstreamCalls},"status":${status}` +
      (record.codes ? `,"outcome":"error","codes":${JSON.stringify(record.codes)}` : ',"outcome":"ok"') +
      ',"msg":"operation"}\n',
  );
}

/**
 * One log line per GraphQL operation: request id (the caller's `x-request-id` when it is sane, else
 * a new one, echoed in the response), client address, operation name and type, duration, upstream calls made, the
 * HTTP status, and the error codes if any. Never a header, a variable or a token.
 */
export function useOperationLog(
  logger: Logger,
  clientAddress: (req: IncomingMessage) => string = (req) => req.socket.remoteAddress ?? '',
): Plugin {
  const records = new WeakMap<Request, OperationRecord>();
  return {
    onParams({ request, params, context }) {
      const req = (context as { req?: IncomingMessage }).req;
      records.set(request, {
        started: performance.now(),
        requestId: requestIdOf(request.headers.get('x-request-id')),
        clientAddress: req ? clientAddress(req) : '',
        ...(typeof params.operationName === 'string'
          ? { operationName: params.operationName.slice(0, 100) }
          : {}),
      });
    },
    onExecute({ args }) {
      const context = args.contextValue as { request?: Request; upstreamCalls?: () => number };
      const record = context.request && records.get(context.request);
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
    },
    onResultProcess({ request, result }) {
      const record = records.get(request);
      if (!record) return;
      const results = Array.isArray(result) ? result : [result];
      const codes = results.flatMap((one) =>
        'errors' in one && one.errors
          ? one.errors.map((error: GraphQLError) => String(error.extensions?.code ?? 'INTERNAL_SERVER_ERROR'))
          : [],
      );
      if (codes.length > 0) record.codes = [...new Set(codes)].slice(0, 10);
    },
    onResponse({ request, response }) {
      const record = records.get(request);
      if (!record) return;
      response.headers.set('x-request-id', record.requestId);
      logOperation(logger, record, response.status);
    },
  };
}
