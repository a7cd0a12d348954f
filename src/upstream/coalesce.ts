import { UpstreamTimeoutError } from './errors.ts';

/**
 * Shares one in-flight call between the operations that need it at the same time. Each waiter keeps
 * its own deadline: when a waiter's signal aborts, that waiter alone fails with
 * `UpstreamTimeoutError`; the shared call is aborted only once every waiter has given up. An entry
 * lives exactly as long as its call is in flight, so nothing is ever served from a finished call
 * (that is the response cache's job).
 */
export interface Coalescer {
  /**
   * Joins the call in flight under `key`, or starts one with `start`. `start` receives the shared
   * call's own signal, which aborts only when every waiter has left; `joined` is told whenever a
   * waiter is served by a call someone else started. Whatever the shared call settles with is
   * handed to every waiter as it is: callers must treat it as read-only (share strings, not objects).
   */
  run<T>(
    key: string,
    waiter: AbortSignal,
    start: (shared: SharedCall) => Promise<T>,
    joined?: () => void,
  ): Promise<T>;
}

/** What the function that makes the shared call gets. */
export interface SharedCall {
  /** Aborts only when every waiter has given up. */
  readonly signal: AbortSignal;
}

interface Flight {
  readonly promise: Promise<unknown>;
  readonly controller: AbortController;
  waiters: number;
  /** The waiters' signals, from which `onJoin` may compute the shared call's deadline. */
  readonly signals: Set<AbortSignal>;
}

/**
 * Creates an empty coalescer. `onJoin` sees every waiter added to a call already in flight, with the
 * set of waiters' signals (the shared call's deadline may follow the latest of them).
 */
export function createCoalescer(
  onJoin?: (shared: AbortSignal, waiters: ReadonlySet<AbortSignal>) => void,
): Coalescer {
  const flights = new Map<string, Flight>();
  return {
    run<T>(
      key: string,
      waiter: AbortSignal,
      start: (shared: SharedCall) => Promise<T>,
      joined?: () => void,
    ): Promise<T> {
      if (waiter.aborted) return Promise.reject(new UpstreamTimeoutError('deadline passed'));
      const current = flights.get(key);
      if (current !== undefined) {
        joined?.();
        return wait(key, current, waiter) as Promise<T>;
      }
      const controller = new AbortController();
      // Removed the moment the call settles: a later waiter starts a new call.
      const promise = start({ signal: controller.signal }).finally(() => {
        if (flights.get(key) === flight) flights.delete(key);
      });
      const flight: Flight = { controller, promise, waiters: 0, signals: new Set() };
      flights.set(key, flight);
      return wait(key, flight, waiter) as Promise<T>;
    },
  };

  function wait(key: string, flight: Flight, waiter: AbortSignal): Promise<unknown> {
    flight.waiters++;
    flight.signals.add(waiter);
    if (flight.waiters > 1) onJoin?.(flight.controller.signal, flight.signals);
    return new Promise((resolve, reject) => {
      let left = false;
      const leave = () => {
        if (left) return;
        left = true;
        waiter.removeEventListener('abort', onAbort);
        flight.waiters--;
        flight.signals.delete(waiter);
      };
      const onAbort = () => {
        leave();
        reject(new UpstreamTimeoutError('deadline passed'));
        if (flight.waiters === 0) {
          // Nobody is left to read the answer: cancel the call, and let the next one start afresh.
          if (flights.get(key) === flight) flights.delete(key);
          flight.controller.abort(new DOMException('Every waiter gave up.', 'AbortError'));
        }
      };
      waiter.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(
        (value) => {
          if (left) return;
          leave();
          resolve(value);
        },
        (error: unknown) => {
          if (left) return;
          leave();
          reject(error);
        },
      );
    });
  }
}
