/**
 * Options that keep an in-process gateway from logging every one of thousands of operations to
 * stdout. The logging options of createGateway are still changing (`log`, then a pino `logger`),
 * so this passes whichever the current src understands, without naming them in its types.
 */
export async function quietLogging(): Promise<object> {
  const options: Record<string, unknown> = { log: () => {} };
  const loggingModule = '../../src/observability/logging.ts';
  try {
    const { createLogger } = (await import(/* @vite-ignore */ loggingModule)) as {
      createLogger?: (level: string) => unknown;
    };
    if (createLogger) options.logger = createLogger('silent');
  } catch {
    // No structured logger in this version of the gateway.
  }
  return options;
}
