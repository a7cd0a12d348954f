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
import type { UpstreamObserver, UpstreamRoute } from './observer.ts';
import type { RawResponse, Send, Transport } from './transport.ts';

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
  /** Full-jitter exponential backoff; the scope's expiry cuts it short. */
  const backoff = (attempt: number, scope: CallScope) =>
    pause(Math.random() * retryBaseMs * 2 ** attempt, scope);

  function notifyRetry(route: UpstreamRoute, reason: 'unavailable' | 'overloaded' | 'rate_limited') {
    for (const observer of observers) observer.retry?.(route, reason);
  }

  /**
   * One REST call under the breaker. Idempotent routes (the contract's GETs) are retried (connection
   * errors, 502/503/504, and 429 when its Retry-After ends before the deadline); the others (a
   * POST) go out exactly once, whatever happens.
   * The scope bounds every attempt and every backoff: a slow-drip body cannot stretch it, unlike
   * undici's idle-only bodyTimeout. A call cancelled because its client went away is not a
   * failure: neither retried nor counted by the breaker.
   */
  const call: Send = async (route, path, auth, body, scope) => {
    const { idempotent, name } = route;
    for (let attempt = 0; ; attempt++) {
      if (scope.expired) throw expiryError(scope);
      if (!breaker.tryAcquire()) {
        for (const observer of observers) observer.shortCircuit?.(name);
        throw new UpstreamUnavailableError('circuit open');
      }
      let response: RawResponse;
      try {
        response = await transport.exchange(route, path, auth, body, scope);
      } catch (error) {
        const failure = error as UpstreamError;
        if (failure instanceof UpstreamCancelledError) {
          breaker.onCancel();
          throw failure;
        }
        if (failure instanceof UpstreamUnavailableError || failure instanceof UpstreamTimeoutError)
          breaker.onFailure();
        else breaker.onSuccess();
        if (!idempotent || attempt >= maxRetries || !(failure instanceof UpstreamUnavailableError))
          throw failure;
        notifyRetry(name, 'unavailable');
        await backoff(attempt, scope);
        continue;
      }
      const overloaded = isOverloadStatus(response.status);
      if (overloaded) breaker.onFailure();
      else breaker.onSuccess();
      if (idempotent && attempt < maxRetries) {
        if (overloaded) {
          notifyRetry(name, 'overloaded');
          await backoff(attempt, scope);
          continue;
        }
        if (response.status === 429) {
          const wait = parseRetryAfter(response.headers['retry-after']);
          if (wait !== undefined && Date.now() + wait * 1000 < scope.end) {
            notifyRetry(name, 'rate_limited');
            await pause(wait * 1000, scope);
            continue;
          }
        }
      }
      if (auth !== undefined && (response.status < 300 || response.status === 401)) {
        for (const observer of observers) observer.keyAnswered?.(auth, response.status < 300);
      }
      return response;
    }
  };

  return { call, breaker };
}

/** Waits `ms`, or fails (as a timeout, or cancelled) as soon as the scope expires. */
function pause(ms: number, scope: CallScope): Promise<void> {
  return new Promise((resolve, reject) => {
    const forget = scope.onExpire(() => {
      clearTimeout(timer);
      reject(expiryError(scope));
    });
    const timer = setTimeout(() => {
      forget();
      resolve();
    }, ms);
  });
}

/** `Retry-After` as whole seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
