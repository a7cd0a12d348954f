import { type BreakerOptions, CircuitBreaker } from './breaker.ts';
import type { CallScope } from './deadline.ts';
import {
  expiryError,
  isOverloadStatus,
  UpstreamCancelledError,
  type UpstreamError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from './errors.ts';
import type { UpstreamObserver } from './observer.ts';
import type { Done, RawResponse, Send, Transport } from './transport.ts';

/*
 * The client's middle layer: one REST call as the transport's exchanges under the origin's circuit
 * breaker, retried where the contract allows it.
 */

export interface RetryOptions {
  /** Retries of a GET after the first attempt. @default 2 */
  maxRetries?: number;
  /** Base of the full-jitter exponential backoff. @default 50 */
  retryBaseMs?: number;
  breaker?: Omit<BreakerOptions, 'onStateChange'>;
  observers: readonly UpstreamObserver[];
}

export interface RetryingCaller {
  /** One REST call: idempotent routes retried, the others sent once, all under the breaker. */
  readonly call: Send;
  readonly breaker: CircuitBreaker;
}

export function createRetryingCaller(transport: Transport, options: RetryOptions): RetryingCaller {
  const maxRetries = options.maxRetries ?? 2;
  const retryBaseMs = options.retryBaseMs ?? 50;
  const { observers } = options;
  const breaker = new CircuitBreaker({
    ...(options.breaker ?? { failureThreshold: 5, openMs: 5000 }),
    onStateChange: (state) => {
      for (const observer of observers) observer.breaker?.(state);
    },
  });

  /**
   * One REST call under the breaker. Idempotent routes (the contract's GETs) are retried (connection
   * errors, 502/503/504, and 429 when its Retry-After ends before the deadline); the others (a
   * POST) go out exactly once, whatever happens.
   * The scope bounds every attempt and every backoff: a slow-drip body cannot stretch it, unlike
   * undici's idle-only bodyTimeout. A call cancelled because its client went away is not a
   * failure: neither retried nor counted by the breaker.
   */
  const call: Send = (route, path, auth, body, scope, done) => {
    const { idempotent, name } = route;
    let attempt = 0;
    const again = (reason: RetryReason, waitMs: number) => {
      for (const observer of observers) observer.retry?.(name, reason);
      pause(waitMs, scope, (expired) => {
        if (expired) return done(expired);
        attempt++;
        send();
      });
    };
    /** Full-jitter exponential backoff; the scope's expiry cuts it short. */
    const backoff = () => Math.random() * retryBaseMs * 2 ** attempt;
    const answered: Done<RawResponse> = (failure, answer) => {
      if (failure !== undefined) {
        if (failure instanceof UpstreamCancelledError) {
          breaker.onCancel();
          return done(failure);
        }
        if (failure instanceof UpstreamUnavailableError || failure instanceof UpstreamTimeoutError)
          breaker.onFailure();
        else breaker.onSuccess();
        if (!idempotent || attempt >= maxRetries || !(failure instanceof UpstreamUnavailableError))
          return done(failure);
        return again('unavailable', backoff());
      }
      const response = answer as RawResponse;
      const overloaded = isOverloadStatus(response.status);
      if (overloaded) breaker.onFailure();
      else breaker.onSuccess();
      if (idempotent && attempt < maxRetries) {
        if (overloaded) return again('overloaded', backoff());
        if (response.status === 429) {
          const wait = parseRetryAfter(response.headers['retry-after']);
          if (wait !== undefined && Date.now() + wait * 1000 < scope.end)
            return again('rate_limited', wait * 1000);
        }
      }
      if (auth !== undefined && (response.status < 300 || response.status === 401)) {
        for (const observer of observers) observer.keyAnswered?.(auth, response.status < 300);
      }
      done(undefined, response);
    };
    const send = () => {
      if (scope.expired) return done(expiryError(scope));
      if (!breaker.tryAcquire()) {
        for (const observer of observers) observer.shortCircuit?.(name);
        return done(new UpstreamUnavailableError('circuit open'));
      }
      transport.exchange(route, path, auth, body, scope, answered);
    };
    send();
  };

  return { call, breaker };
}

type RetryReason = 'unavailable' | 'overloaded' | 'rate_limited';

/** Waits `ms`, then calls `then`; at once with the expiry's error if the scope expires first. */
function pause(ms: number, scope: CallScope, then: (expired?: UpstreamError) => void) {
  if (scope.expired) return then(expiryError(scope));
  const forget = scope.onExpire(() => {
    clearTimeout(timer);
    then(expiryError(scope));
  });
  const timer = setTimeout(() => {
    forget();
    then();
  }, ms);
}

/** `Retry-After` as whole seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
