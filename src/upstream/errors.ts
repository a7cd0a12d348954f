import { GraphQLError } from 'graphql';

/**
 * Every way a call to the REST upstream can fail, typed once. Resolvers never see these:
 * the loaders turn them into GraphQL errors through `toGraphQLError`, the one mapping table.
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

/** Upstream messages are passed on, but bounded: they are someone else's text. */
const MAX_MESSAGE_LENGTH = 500;

/**
 * The one table from upstream failures to what a GraphQL client sees. Only codes, statuses and the
 * upstream's own Error message cross over: never its URL, headers, body or the caller's token.
 */
export function toGraphQLError(error: unknown): Error {
  if (error instanceof GraphQLError) return error;
  if (error instanceof UpstreamResponseError) {
    return new GraphQLError(error.message.slice(0, MAX_MESSAGE_LENGTH), {
      extensions: {
        code: error.code,
        status: error.status,
        ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
      },
    });
  }
  if (error instanceof UpstreamTimeoutError) {
    return new GraphQLError('The animal store did not answer in time.', {
      extensions: { code: 'UPSTREAM_TIMEOUT' },
    });
  }
  if (error instanceof UpstreamUnavailableError) {
    return new GraphQLError('The animal store is unavailable.', {
      extensions: { code: 'UPSTREAM_UNAVAILABLE' },
    });
  }
  if (error instanceof UpstreamRateLimitedError) {
    return new GraphQLError('The animal store is rate limiting requests; retry later.', {
      extensions: {
        code: 'UPSTREAM_RATE_LIMITED',
        status: 429,
        ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
      },
    });
  }
  if (error instanceof UpstreamBadResponseError) {
    return new GraphQLError('The animal store sent an answer outside its contract.', {
      extensions: { code: 'UPSTREAM_BAD_RESPONSE' },
    });
  }
  // Anything else is a bug of ours: it stays a plain Error, which Yoga masks as an unexpected error.
  return error instanceof Error ? error : new Error(String(error));
}
