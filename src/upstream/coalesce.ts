import { type CallScope, type Deadline, ExpiringScope } from './deadline.ts';
import { UpstreamTimeoutError } from './errors.ts';

/**
 * Shares one in-flight call between the operations that need it at the same time. Each waiter keeps
 * its own deadline: when a waiter's deadline passes, that waiter alone fails with
 * `UpstreamTimeoutError`; the shared call is cancelled only once every waiter has given up. An
 * entry lives exactly as long as its call is in flight, so nothing is ever served from a finished
 * call (that is the response cache's job).
 *
 * A call nobody joins pays for a map entry, a flight and one promise for its waiter: the flight is
 * the call's scope (no controller or timer of its own), and its latest end is its one waiter's.
 */
export interface Coalescer {
  /**
   * Joins the call in flight under `key`, or starts one with `start`. `start` receives the shared
   * call's scope, which expires only when every waiter has left and ends at the latest waiter's
   * deadline; `joined` is told whenever a waiter is served by a call someone else started.
   * Whatever the shared call settles with is handed to every waiter as it is: callers must treat it
   * as read-only (share strings, not objects).
   */
  run<T>(
    key: string,
    waiter: Deadline,
    start: (shared: CallScope) => Promise<T>,
    joined?: () => void,
  ): Promise<T>;
}

interface Waiter {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Forgets this waiter's deadline hook. */
  forget(): void;
}

/** One call in flight: its waiters, and the scope the call runs under. */
class Flight extends ExpiringScope {
  readonly waiters = new Set<Waiter>();
  end: number;

  constructor(end: number) {
    super();
    this.end = end;
  }
}

/** Creates an empty coalescer. */
export function createCoalescer(): Coalescer {
  const flights = new Map<string, Flight>();
  return {
    run<T>(key: string, waiter: Deadline, start: (shared: CallScope) => Promise<T>, joined?: () => void) {
      if (waiter.expired) return Promise.reject(new UpstreamTimeoutError('deadline passed'));
      let flight = flights.get(key);
      if (flight !== undefined) {
        joined?.();
        // The shared call may wait (for a 429's Retry-After) until the latest waiter's deadline.
        if (waiter.end > flight.end) flight.end = waiter.end;
        return wait(key, flight, waiter) as Promise<T>;
      }
      const started = new Flight(waiter.end);
      flight = started;
      flights.set(key, started);
      const promise = wait(key, started, waiter) as Promise<T>;
      // Removed the moment the call settles: a later waiter starts a new call.
      start(started).then(
        (value) => settle(key, started, (w) => w.resolve(value)),
        (error: unknown) => settle(key, started, (w) => w.reject(error)),
      );
      return promise;
    },
  };

  function settle(key: string, flight: Flight, each: (waiter: Waiter) => void): void {
    if (flights.get(key) === flight) flights.delete(key);
    for (const waiter of flight.waiters) {
      waiter.forget();
      each(waiter);
    }
    flight.waiters.clear();
  }

  function wait(key: string, flight: Flight, deadline: Deadline): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, forget: () => {} };
      flight.waiters.add(waiter);
      waiter.forget = deadline.onExpire(() => {
        flight.waiters.delete(waiter);
        reject(new UpstreamTimeoutError('deadline passed'));
        if (flight.waiters.size === 0) {
          // Nobody is left to read the answer: cancel the call, and let the next one start afresh.
          if (flights.get(key) === flight) flights.delete(key);
          flight.expire();
        }
      });
    });
  }
}
