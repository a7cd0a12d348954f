import type { Logger } from 'pino';

/**
 * What the process itself says on stdout, beside the log of what it serves: where it listens, the
 * embedded store and its key, workers starting and dying, the drain starting. For a person they
 * are `pet-gateway: …` lines; with LOG_FORMAT=json they are log lines like every other (pino's
 * level, time and service), so that a collector reading stdout can parse each line it gets.
 */
export interface ProcessLines {
  /** One line: `pet-gateway: <text>`, or an info log line whose `msg` is the text. */
  say(text: string): void;
  /** A line for a person's shell to take as it is (`export KEY=…`); nothing in JSON. */
  paste(line: string): void;
}

/** Lines for a person. */
export function plainLines(): ProcessLines {
  return {
    say: (text) => console.log(`pet-gateway: ${text}`),
    paste: (line) => console.log(line),
  };
}

/**
 * Log lines through `logger`, at info whatever LOG_LEVEL says (the plain lines print whatever it
 * says: they are how an operator finds the URL and the key), each written at once rather than
 * gathered with the request log's (`flush`).
 */
export function jsonLines(logger: Logger, flush: () => void): ProcessLines {
  const lines = logger.child({}, { level: 'info' });
  return {
    say: (text) => {
      lines.info(text);
      flush();
    },
    paste: () => {},
  };
}
