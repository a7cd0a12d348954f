import type { YogaLogger } from 'graphql-yoga';
import { type DestinationStream, type Logger, pino } from 'pino';
import { CODES } from '../codes.ts';
import { MAX_OPERATION_NAME } from './labels.ts';
import type { RequestId } from './request-id.ts';

/**
 * The gateway's JSON logger. `authorization` is redacted where a header bag would carry it, as a
 * second line of defence: no code path logs headers or tokens in the first place. Explicit paths,
 * no wildcards: pino's redaction walks every top-level key for a `*` path, which doubled the cost of
 * the log line written for every operation.
 */
export function createLogger(level: string, destination: DestinationStream = createLogDestination()): Logger {
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
    destination,
  );
  if (isLogDestination(destination))
    destination.onDropped((lines, reason) =>
      logger.warn(
        { droppedLines: lines, reason },
        reason === 'stalled'
          ? 'log lines dropped: the log reader did not keep up'
          : 'log lines dropped: writing the log failed',
      ),
    );
  plainLoggers.add(logger);
  return logger;
}

function isLogDestination(destination: DestinationStream): destination is LogDestination {
  return typeof (destination as Partial<LogDestination>).onDropped === 'function';
}

/** What the log destination adds to pino's stream: flushing, and word of what it dropped. */
export interface LogDestination extends DestinationStream {
  /** Writes what waits, waiting at most `deadlineMs` for a stalled reader (shutdown). */
  flushWithin(deadlineMs: number): Promise<void>;
  flushSync(): void;
  /** Lines dropped so far (the reader stalled past the buffer, or writing failed). */
  readonly dropped: number;
  /**
   * Told, once the sink takes lines again, how many were dropped meanwhile and why; its own line
   * goes out through the same destination.
   */
  onDropped(listener: (lines: number, reason: 'stalled' | 'failed') => void): void;
}

/** Bytes of log lines waiting for a slow reader before new lines are dropped. */
export const DEFAULT_LOG_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * stdout for the logs, never blocking the event loop: a log shipper that stalls (or Docker's
 * blocking log mode) fills the pipe, and a synchronous write would then block the gateway, /health
 * included, until the reader resumed. Lines are gathered into blocks of up to 64 KB or 100 ms
 * (gatherLines) and handed to sonic-boom (pino's own destination), which writes
 * what it can and keeps the rest; its `maxLength` bounds what waits: past it lines are dropped
 * and counted, and one warn line says how many once the reader drains the backlog. A
 * write error (ENOSPC on a full disk, EPIPE, EBADF) is counted the same way and reported once on
 * stderr: the gateway keeps serving either way.
 */
export function createLogDestination(
  fd = 1,
  options: { maxBufferBytes?: number; format?: (line: string) => string } = {},
): LogDestination {
  const boom = openNonBlocking(fd, options.maxBufferBytes ?? DEFAULT_LOG_BUFFER_BYTES);
  const retryLater = retryWhileBusy(boom);
  const drops = countDrops(boom, fd, retryLater);
  // A block is a small part of what may wait for a stalled reader, so a stall drops lines, not blocks.
  const maxBufferBytes = options.maxBufferBytes ?? DEFAULT_LOG_BUFFER_BYTES;
  const lines = gatherLines(boom, Math.min(FLUSH_AT, Math.floor(maxBufferBytes / 8)));
  flushAtExit(() => {
    lines.flushSync();
    boom.flushSync();
  });
  return {
    write: options.format
      ? (line) => lines.write((options.format as (line: string) => string)(line))
      : lines.write,
    flushSync: lines.flushSync,
    async flushWithin(deadlineMs) {
      lines.flushSync();
      for (const until = Date.now() + deadlineMs; busy(boom) && Date.now() < until; ) {
        boom.write('');
        if (busy(boom)) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    },
    get dropped() {
      return drops.dropped;
    },
    onDropped: drops.onDropped,
  };
}

type Sink = ReturnType<typeof pino.destination>;
type DropReason = 'stalled' | 'failed';

/** sonic-boom on `fd`: synchronous writes that never wait for the reader. */
function openNonBlocking(fd: number, maxBufferBytes: number): Sink {
  // Synchronous writes, but never waiting: Node opens stdout's pipe non-blocking, so a full pipe
  // answers EAGAIN at once, and retryEAGAIN: false keeps sonic-boom from sleeping and retrying in
  // place (its default, which blocks the event loop for as long as the reader stalls). What was not
  // written waits in sonic-boom's buffer, bounded by maxLength, and goes out with the next write or
  // the next retry (retryWhileBusy).
  // Opening process.stdout (or stderr) is what makes Node set its pipe non-blocking: done here so
  // it holds even in a process that has printed nothing yet (a worker).
  if (fd === 1) void process.stdout.writable;
  else if (fd === 2) void process.stderr.writable;
  return pino.destination({ dest: fd, sync: true, maxLength: maxBufferBytes, retryEAGAIN: () => false });
}

/** What waits for a stalled reader is tried again every RETRY_MS until it is written (one timer at most). */
function retryWhileBusy(boom: Sink): () => void {
  let retry: NodeJS.Timeout | undefined;
  const retryLater = () => {
    if (retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      // An empty write makes sonic-boom try what waits again.
      if (busy(boom)) boom.write('');
      if (busy(boom)) retryLater();
    }, RETRY_MS);
    retry.unref();
  };
  return retryLater;
}

/**
 * Counts the lines sonic-boom drops (past maxLength), says once on stderr that writing failed, and
 * tells the listeners how many were dropped and why once the sink drains.
 */
function countDrops(
  boom: Sink,
  fd: number,
  retryLater: () => void,
): Pick<LogDestination, 'dropped' | 'onDropped'> {
  let dropped = 0;
  let unreported = 0;
  let reason: DropReason = 'stalled';
  let warnedOfError = false;
  let reporting = false;
  const listeners: Array<(lines: number, why: DropReason) => void> = [];
  const lose = (text: string) => {
    let lines = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
    dropped += lines;
    unreported += lines;
  };
  boom.on('drop', (data: string) => lose(data));
  boom.on('error', (error: NodeJS.ErrnoException) => {
    // sonic-boom keeps the chunk and tries it again with the next write; meanwhile what waits is
    // bounded by maxLength, so later lines are dropped (and counted) until the sink takes them.
    retryLater();
    if (error.code === 'EAGAIN' || error.code === 'EWOULDBLOCK') return;
    reason = 'failed';
    if (warnedOfError) return;
    warnedOfError = true;
    if (fd !== 2) warnOnStderr(error);
  });
  boom.on('drain', () => {
    if (unreported === 0 || reporting) return;
    const lines = unreported;
    const why = reason;
    unreported = 0;
    reason = 'stalled';
    warnedOfError = false;
    reporting = true;
    try {
      for (const listener of listeners) listener(lines, why);
    } finally {
      reporting = false;
    }
  });
  return {
    get dropped() {
      return dropped;
    },
    onDropped(listener) {
      listeners.push(listener);
    },
  };
}

function warnOnStderr(error: NodeJS.ErrnoException): void {
  try {
    process.stderr.write(
      `pet-gateway: writing the log failed (${error.code ?? error.message}); lines are dropped and counted until it works again\n`,
    );
  } catch {
    // stderr is gone too: nothing left to tell.
  }
}

/**
 * Lines gathered into blocks and handed over in one write, as nginx's `access_log … buffer= flush=`
 * does: when `flushAt` characters wait, or FLUSH_MS after the first of them, whichever comes first.
 * Each write wakes the reader (containerd, dockerd, a shipper): a write per line or per event-loop
 * turn costs both sides a system call per request under load. The drain and the exit write what
 * waits (flushWithin, flushAtExit).
 */
function gatherLines(boom: Sink, flushAt: number): { write(line: string): void; flushSync(): void } {
  let waiting = '';
  let timer: NodeJS.Timeout | undefined;
  const flushSync = () => {
    clearTimeout(timer);
    timer = undefined;
    if (waiting === '') return;
    const text = waiting;
    waiting = '';
    boom.write(text);
  };
  return {
    write(line) {
      waiting += line;
      if (waiting.length >= flushAt) flushSync();
      // Unreferenced: a process with nothing else to do may exit, and its exit writes the rest.
      else if (timer === undefined) timer = setTimeout(flushSync, FLUSH_MS).unref();
    },
    flushSync,
  };
}

/**
 * Whatever way the process ends (a forced exit after the drain timeout, a crash), the lines of its
 * last turn are written, unless the sink is stalled: a synchronous write would then block the exit
 * for as long as the reader does.
 */
function flushAtExit(flush: () => void): void {
  if (unflushed.size === 0)
    process.once('exit', () => {
      for (const each of unflushed) each();
    });
  unflushed.add(() => {
    try {
      flush();
    } catch {
      // A sink that is full or fails at exit: the lines are lost, the exit is not held.
    }
  });
}

/** Whether a write is under way or lines wait: sonic-boom exposes no public state for either. */
function busy(boom: Sink): boolean {
  const state = boom as unknown as SonicState;
  return state._writing || state._len > 0;
}

interface SonicState {
  _writing: boolean;
  _len: number;
}

/** How soon what waits for a stalled reader is tried again. */
const RETRY_MS = 50;

/** Characters of log lines gathered into one block at most. */
const FLUSH_AT = 64 * 1024;
/** The longest a line waits to be written: its delay on the reader's side. */
const FLUSH_MS = 100;

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
  requestId: RequestId;
  /** The client's address: the peer, or the client a trusted proxy forwarded. */
  clientAddress: string;
  operationName?: string;
  operationType?: 'query' | 'mutation' | 'subscription';
  codes?: string[];
  upstreamCalls?: () => number;
  /** Where the operation stood in a batched request; undefined for a single request. */
  batch?: { readonly index: number; readonly size: number; readonly shared?: boolean };
  /** The client went away before the answer was written (outcome `client_gone`). */
  clientGone?: boolean;
}

/** The status logged for an operation whose client went away: nginx's "client closed request". */
export const CLIENT_GONE_STATUS = CODES.CLIENT_GONE.status;

/**
 * Writes the operation's log line; never a header, a variable or a token. The line is the one pino
 * writes for these fields (level, time, the logger's bindings, the fields, msg), built as text: one
 * is written per request, and pino's object-to-JSON path costs more than the line's own text
 * (docs/performance.md).
 */
export function logOperation(logger: Logger, record: OperationRecord, status: number): void {
  const durationMs = Math.round((performance.now() - record.started) * 100) / 100;
  const upstreamCalls = record.upstreamCalls?.() ?? 0;
  if (!plainLoggers.has(logger)) {
    logger.info(
      {
        requestId: record.requestId,
        clientAddress: record.clientAddress,
        operationName: record.operationName?.slice(0, MAX_OPERATION_NAME) ?? null,
        operationType: record.operationType ?? null,
        durationMs,
        upstreamCalls,
        status,
        outcome: outcomeOf(record),
        ...(record.codes ? { codes: record.codes } : {}),
        ...(record.batch ? { batch: { index: record.batch.index, size: record.batch.size } } : {}),
      },
      'operation',
    );
    return;
  }
  if (!logger.isLevelEnabled('info')) return;
  const name =
    record.operationName === undefined
      ? 'null'
      : JSON.stringify(record.operationName.slice(0, MAX_OPERATION_NAME));
  const type = record.operationType === undefined ? 'null' : `"${record.operationType}"`;
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
  // The request id (a RequestId) and the operation type (one of three words) need no escaping;
  // the address may come from a header, so it is escaped.
  stream?.write(
    `{"level":${logger.levels.values.info},"time":"${isoNow()}"${bindings},"requestId":"${record.requestId}","clientAddress":${JSON.stringify(record.clientAddress)},"operationName":${name},"operationType":${type},"durationMs":${durationMs},"upstreamCalls":${upstreamCalls},"status":${status},"outcome":"${outcomeOf(record)}"${
      record.codes ? `,"codes":${JSON.stringify(record.codes)}` : ''
    }${record.batch ? `,"batch":{"index":${record.batch.index},"size":${record.batch.size}}` : ''},"msg":"operation"}\n`,
  );
}

function outcomeOf(record: OperationRecord): 'ok' | 'error' | 'client_gone' {
  return record.clientGone ? 'client_gone' : record.codes ? 'error' : 'ok';
}

let isoMillisecond = 0;
let isoText = '';

/** `new Date().toISOString()`, made once per millisecond: many lines share one under load. */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMillisecond) {
    isoMillisecond = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}
