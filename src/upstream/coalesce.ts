import { type CallScope, type Deadline, ExpiringScope } from './deadline.ts';
import { expiryError, type UpstreamError } from './errors.ts';
import type { Done } from './transport.ts';

/**
 * Shares one in-flight call between the operations that need it at the same time. Each waiter keeps
 * its own deadline: when a waiter's deadline passes (or its client goes away), that waiter alone
 * fails with `UpstreamTimeoutError` (or `UpstreamCancelledError`); the shared call is cancelled only
 * once every waiter has given up, for the reason the last one gave. An
 * entry lives exactly as long as its call is in flight, so nothing is ever served from a finished
 * call (that is the response cache's job).
 *
 * A call nobody joins pays for a map entry, a flight and a record for its waiter: the flight is
 * the call's scope (no controller or timer of its own), and its latest end is its one waiter's.
 */
export interface Coalescer {
  /**
   * Joins the call in flight under `key`, or starts one with `start`; `done` is told how it ended
   * for this waiter. `start` receives the shared call's scope, which expires only when every waiter
   * has left and ends at the latest waiter's deadline; `joined` is told whenever a waiter is served
   * by a call someone else started. Whatever the shared call settles with is handed to every waiter
   * as it is: callers must treat it as read-only (share strings, not objects).
   */
  run<T>(
    key: string,
    waiter: Deadline,
    start: (shared: CallScope, done: Done<T>) => void,
    done: Done<T>,
    joined?: () => void,
  ): void;
  /**
   * A write was answered: calls in flight now keep their waiters, but no later waiter joins them.
   * Each read them as the store was when it was sent, maybe before the write; a read that starts
   * after the write's answer must see it (docs/limits.md, read your own writes).
   */
  seal(): void;
}

interface Waiter {
  done: Done<unknown>;
  /** Forgets this waiter's deadline hook. */
  forget: () => void;
}

/**
 * One call in flight: its waiters, and the scope the call runs under. Most calls are never joined,
 * so the first waiter is a field and a list is made only when a second one comes.
 */
class Flight extends ExpiringScope {
  first: Waiter | undefined;
  others: Waiter[] | undefined;
  end: number;

  constructor(end: number) {
    super();
    this.end = end;
  }

  get size(): number {
    return (this.first ? 1 : 0) + (this.others?.length ?? 0);
  }

  add(waiter: Waiter): void {
    if (this.first === undefined && this.others === undefined) this.first = waiter;
    else {
      this.others ??= [];
      this.others.push(waiter);
    }
  }

  remove(waiter: Waiter): void {
    if (this.first === waiter) this.first = undefined;
    else if (this.others) {
      const index = this.others.indexOf(waiter);
      if (index !== -1) this.others.splice(index, 1);
    }
  }

  /** Takes every waiter out, each told to forget its deadline hook. */
  takeAll(): Waiter[] | Waiter | undefined {
    const { first, others } = this;
    this.first = undefined;
    this.others = undefined;
    first?.forget();
    if (others === undefined) return first;
    for (const waiter of others) waiter.forget();
    return first ? [first, ...others] : others;
  }
}

/**
 * Creates an empty coalescer. `share` gives each waiter its own copy of a failure (default: the
 * failure itself), so that no two operations hold the same error object.
 */
export function createCoalescer(
  share: (error: UpstreamError) => UpstreamError = (error) => error,
): Coalescer {
  const flights = new Map<string, Flight>();
  return {
    run(key, waiter, start, done, joined) {
      if (waiter.expired) return done(share(expiryError(waiter)));
      let flight = flights.get(key);
      if (flight !== undefined) {
        joined?.();
        // The shared call may wait (for a 429's Retry-After) until the latest waiter's deadline.
        if (waiter.end > flight.end) flight.end = waiter.end;
        return wait(key, flight, waiter, done as Done<unknown>);
      }
      const started = new Flight(waiter.end);
      flight = started;
      flights.set(key, started);
      wait(key, started, waiter, done as Done<unknown>);
      // Removed the moment the call settles: a later waiter starts a new call.
      start(started, (error, value) => {
        if (flights.get(key) === started) flights.delete(key);
        const waiters = started.takeAll();
        if (Array.isArray(waiters))
          for (const each of waiters) each.done(error === undefined ? undefined : share(error), value);
        else waiters?.done(error === undefined ? undefined : share(error), value);
      });
    },
    seal() {
      flights.clear();
    },
  };

  function wait(key: string, flight: Flight, deadline: Deadline, done: Done<unknown>): void {
    const waiter: Waiter = { done, forget: noop };
    flight.add(waiter);
    waiter.forget = deadline.onExpire(() => {
      flight.remove(waiter);
      done(share(expiryError(deadline)));
      if (flight.size === 0) {
        // Nobody is left to read the answer: cancel the call, and let the next one start afresh.
        // The last waiter's reason is the call's: its client gone, the call is no upstream failure.
        if (flights.get(key) === flight) flights.delete(key);
        flight.expire(deadline.reason);
      }
    });
  }
}

const noop = () => {};
