import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

/**
 * Polls `check` every 20 ms until it holds; resolves with how long that took, in milliseconds.
 * Throws past `timeoutMs`, so a test waits for a state instead of sleeping a guessed time.
 */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - started;
}

/** A pino logger whose lines a test reads back, parsed, as a log reader would. */
export function capturedLogs(level: string): {
  logger: Logger;
  lines: Array<{ level: number; msg: string; reason?: string }>;
} {
  const lines: Array<{ level: number; msg: string; reason?: string }> = [];
  const logger = pino(
    { level },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  return { logger, lines };
}
