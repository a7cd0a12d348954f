import type { HttpServer } from '../edge/listener.ts';

export interface DrainOptions {
  server: HttpServer;
  /** How long in-flight operations get before the remaining connections are closed anyway. */
  timeoutMs: number;
  /** How long an idle keep-alive connection stays open once draining starts. */
  idleGraceMs: number;
  /** Says the drain started, in one line; absent in a worker, whose primary says it for all of them. */
  say?: (text: string) => void;
  /**
   * Called first: `/readiness` answers 503 from here on, and long-lived streams begin to end (their
   * clients reconnect elsewhere) while the listener waits for its connections.
   */
  onStart: () => void | Promise<void>;
  /** Closed in this order once the listener has drained: the gateway, the embedded store, tracing. */
  closing: ReadonlyArray<() => Promise<unknown>>;
  /** Writes what the log still holds; bounded by its own wait. */
  flush: () => Promise<unknown>;
}

/**
 * The drain, in its order: readiness fails and subscriptions end; the listener takes no new connections and answers
 * everything from now on with `Connection: close` (edge/listener.ts, edge/connections.ts); idle
 * connections close after `idleGraceMs`, busy ones once answered; then what the process holds
 * closes, the log is flushed, and the process exits 0. Past `timeoutMs` the remaining connections
 * are closed anyway. Returns the stop function; a second signal while draining changes nothing.
 */
export function drainOnSignal(options: DrainOptions): (signal: string) => Promise<void> {
  let stopping = false;
  return async (signal) => {
    if (stopping) return;
    stopping = true;
    await options.onStart();
    const forced = setTimeout(() => {
      console.error('pet-gateway: drain timeout, closing remaining connections');
      // Upgraded sockets included: whatever a client does, the process ends in the window.
      options.server.closeAllConnections();
    }, options.timeoutMs);
    forced.unref();
    // The listener stops taking connections (at once, in drain) before the line says so: a client
    // that connects once it has read the line is refused, not accepted and then reset.
    const drained = options.server.drain(options.idleGraceMs);
    options.say?.(`${signal}, finishing in-flight requests`);
    await drained;
    for (const close of options.closing) await close();
    await options.flush();
    clearTimeout(forced);
    process.exit(0);
  };
}
