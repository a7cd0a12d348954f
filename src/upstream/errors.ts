import type { CallScope } from './deadline.ts';

/**
 * Every way a call to the REST upstream can fail, typed once. Data access knows nothing of
 * GraphQL: the loaders reject with these, and the schema maps them to what a client sees through
 * `toGraphQLError` (src/schema/errors.ts), the one mapping table.
 */
export abstract class UpstreamError extends Error {}

/** The upstream answered with a contract Error body `{code, message, status}`. */
export class UpstreamResponseError extends UpstreamError {
  override name = 'UpstreamResponseError';
  readonly status: number;
  readonly code: string;
  /** Seconds from `Retry-After`, when the upstream sent one we could read. */
  readonly retryAfter: number | undefined;
  constructor(status: number, code: string, message: string, retryAfter?: number) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** The whole-call deadline passed, or a connect/header/body timer fired. */
export class UpstreamTimeoutError extends UpstreamError {
  override name = 'UpstreamTimeoutError';
}

/**
 * The client went away and nobody waits for the answer any more, so the call was given up (or never
 * sent). Not a failure of the upstream: never retried, never counted against it.
 */
export class UpstreamCancelledError extends UpstreamError {
  override name = 'UpstreamCancelledError';
}

/** What a call under `scope` fails with once the scope has expired: a timeout, or a cancellation. */
export function expiryError(scope: CallScope, cause?: unknown): UpstreamError {
  const options = cause === undefined ? undefined : { cause };
  return scope.reason === 'client gone'
    ? new UpstreamCancelledError('client gone', options)
    : new UpstreamTimeoutError('deadline passed', options);
}

/** No usable answer: refused, reset, or 502/503/504 without an Error body. */
export class UpstreamUnavailableError extends UpstreamError {
  override name = 'UpstreamUnavailableError';
}

/** 429 without an Error body. */
export class UpstreamRateLimitedError extends UpstreamError {
  override name = 'UpstreamRateLimitedError';
  readonly retryAfter: number | undefined;
  constructor(retryAfter: number | undefined) {
    super('rate limited');
    this.retryAfter = retryAfter;
  }
}

/** An answer outside the contract: not JSON, wrong shape, unexpected status, redirect, too large. */
export class UpstreamBadResponseError extends UpstreamError {
  override name = 'UpstreamBadResponseError';
}

/**
 * A new error of the same type and content: an upstream call shared by several operations (see
 * coalesce.ts) fails each of them with an error of its own, never one object they could all mutate.
 */
export function copyUpstreamError(error: UpstreamError): UpstreamError {
  if (error instanceof UpstreamResponseError)
    return new UpstreamResponseError(error.status, error.code, error.message, error.retryAfter);
  if (error instanceof UpstreamRateLimitedError) return new UpstreamRateLimitedError(error.retryAfter);
  if (error instanceof UpstreamTimeoutError) return new UpstreamTimeoutError(error.message, { cause: error });
  if (error instanceof UpstreamCancelledError)
    return new UpstreamCancelledError(error.message, { cause: error });
  if (error instanceof UpstreamUnavailableError)
    return new UpstreamUnavailableError(error.message, { cause: error });
  if (error instanceof UpstreamBadResponseError)
    return new UpstreamBadResponseError(error.message, { cause: error });
  return error;
}

/**
 * The statuses that say the upstream (or a proxy in front of it) is unavailable or overloaded, not
 * that the request was wrong: retried for GETs, counted by the breaker, logged as unreachable.
 */
export function isOverloadStatus(status: number | undefined): boolean {
  return status === 502 || status === 503 || status === 504;
}
