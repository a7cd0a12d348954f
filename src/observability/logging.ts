import type { YogaLogger } from 'graphql-yoga';
import { type DestinationStream, type Logger, pino } from 'pino';
import { createLogDestination, type LogDestination } from './log-destination.ts';

/**
 * Where `authorization` is redacted, as a second line of defence: no code path logs headers or
 * tokens in the first place. Explicit paths, no wildcards: pino's redaction walks every top-level
 * key for a `*` path, which doubled the cost of the log line written for every operation.
 */
const REDACTED = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  'err.headers.authorization',
];

/**
 * How every line of a logger `createLogger` made begins and where it goes, for a line written as
 * text (the operation line, operation-line.ts): `{"level":…` then `time()`, then `bindings`, then
 * the line's own fields, then `"msg"`. It holds because createLogger sets no formatters, mixin,
 * hooks or keys of its own, and the gateway never calls `setBindings`.
 */
export interface LineFrame {
  /** The stream the logger was made with: text written here goes out as the logger's lines do. */
  readonly destination: DestinationStream;
  /** The logger's bindings as pino writes them after the time: `,"service":"pet-gateway"`. */
  readonly bindings: string;
}

const frames = new WeakMap<Logger, LineFrame>();

/** The frame of a logger `createLogger` made; undefined for any other (a child among them). */
export function lineFrameOf(logger: Logger): LineFrame | undefined {
  return frames.get(logger);
}

/**
 * The gateway's JSON logger, writing to `destination` (stdout's by default), `authorization`
 * redacted.
 */
export function createLogger(level: string, destination: DestinationStream = createLogDestination()): Logger {
  const logger = pino(
    {
      level,
      base: { service: 'pet-gateway' },
      timestamp: timeField,
      redact: { paths: REDACTED, censor: '[redacted]' },
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
  const bindings = JSON.stringify(logger.bindings());
  frames.set(logger, { destination, bindings: bindings === '{}' ? '' : `,${bindings.slice(1, -1)}` });
  return logger;
}

function isLogDestination(destination: DestinationStream): destination is LogDestination {
  return typeof (destination as Partial<LogDestination>).onDropped === 'function';
}

let isoMillisecond = 0;
let isoText = '';

/**
 * The time of every line, as pino's `isoTime` writes it (`,"time":"<ISO 8601>"`), its text made once
 * per millisecond: many lines share one under load.
 */
export function timeField(): string {
  const now = Date.now();
  if (now !== isoMillisecond) {
    isoMillisecond = now;
    isoText = `,"time":"${new Date(now).toISOString()}"`;
  }
  return isoText;
}

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
