import { type ASTNode, GraphQLError } from 'graphql';
import { type Answered, CODES, type Code } from '../codes.ts';
import {
  UpstreamBadResponseError,
  UpstreamCancelledError,
  UpstreamRateLimitedError,
  UpstreamResponseError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../upstream/errors.ts';

// Every GraphQL error the gateway raises, its code and status read from src/codes.ts: a field's own
// (raised before or instead of any upstream call), a request's refusal, and, in `toGraphQLError`,
// the one mapping from typed upstream failures (upstream/errors.ts) to codes a client sees.

/**
 * A field's error with `code`, the extensions the table fixes for it, then `more`: the answer stays
 * 200, the error beside the data.
 */
export function fieldError(code: Code, message: string, more?: Record<string, unknown>): GraphQLError {
  return new GraphQLError(message, { extensions: { code: code.code, ...code.extensions, ...more } });
}

/**
 * A request refused with `code`: Yoga answers it with the table's status (`extensions.http`);
 * `more.extensions` go beside the code, `more.http` beside the status (headers, Yoga's `spec`).
 */
export function requestError(
  code: Answered,
  message: string,
  more: {
    nodes?: ASTNode | undefined;
    extensions?: Record<string, unknown>;
    http?: Record<string, unknown>;
  } = {},
): GraphQLError {
  return new GraphQLError(message, {
    ...(more.nodes ? { nodes: more.nodes } : {}),
    extensions: { code: code.code, ...more.extensions, http: { status: code.status, ...more.http } },
  });
}

/** An argument the contract would refuse: no upstream call is made. */
export function badUserInput(message: string, argument: string): GraphQLError {
  return fieldError(CODES.BAD_USER_INPUT, message, { argument });
}

/**
 * Where a refused value sits inside the variables, as `argument` names it: the variable, then its
 * keys and indices (`input.name`, `pets[2].id`), as graphql-js prints a path.
 */
export function variablePath(variable: string, keys: ReadonlyArray<string | number>): string {
  return variable + keys.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('');
}

/** An `Authorization` header that cannot be a bearer key: refused without calling the upstream. */
export function unauthenticated(message: string): GraphQLError {
  return fieldError(CODES.UNAUTHENTICATED, message);
}

/** A field whose upstream route has passed its sunset date: refused without calling it. */
export function sunset(message: string): GraphQLError {
  return fieldError(CODES.SUNSET, message);
}

/** The operation's cost is over `MAX_COST`: refused before any of its root fields calls the upstream. */
export function costLimitExceeded(cost: number, limit: number | undefined): GraphQLError {
  return requestError(CODES.COST_LIMIT_EXCEEDED, `The operation costs ${cost}, over the limit of ${limit}.`, {
    extensions: { cost, limit },
  });
}

/** An `_entities` field with more representations than `MAX_REPRESENTATIONS`: nothing is resolved. */
export function representationsLimitExceeded(count: number, limit: number): GraphQLError {
  return requestError(
    CODES.REPRESENTATIONS_LIMIT_EXCEEDED,
    `_entities got ${count} representations, over the limit of ${limit}.`,
    { extensions: { count, limit } },
  );
}

/**
 * The caller's API key (or, for requests without one, its address) has used up its
 * `RATE_LIMIT_PER_MINUTE`: refused before anything runs, with a 429 and `Retry-After` (whole
 * seconds until the minute ends).
 */
export function rateLimited(
  retryAfterSeconds: number,
  by: 'key' | 'address' | 'budget' = 'key',
): GraphQLError {
  const message =
    by === 'budget'
      ? `This operation costs more than is left of the caller's cost budget; retry in ${retryAfterSeconds} s.`
      : `Too many requests ${by === 'key' ? 'for this API key' : 'without an API key from this address'}; retry in ${retryAfterSeconds} s.`;
  return requestError(CODES.RATE_LIMITED, message, {
    extensions: { retryAfter: retryAfterSeconds },
    http: { headers: { 'retry-after': String(retryAfterSeconds) } },
  });
}

/**
 * The caller's address sent more keys the upstream refused than `RATE_LIMIT_REFUSED_KEYS_PER_MINUTE`
 * this minute: a key not accepted yet is refused before any upstream call. Keys the address already
 * used keep working. Its own code, so a client tells it from its key's `RATE_LIMITED`.
 */
export function refusedKeysLimited(retryAfterSeconds: number): GraphQLError {
  return requestError(
    CODES.REFUSED_KEYS_LIMITED,
    `Too many API keys from this address were refused this minute; a key not used here before is checked again in ${retryAfterSeconds} s.`,
    {
      extensions: { retryAfter: retryAfterSeconds },
      http: { headers: { 'retry-after': String(retryAfterSeconds) } },
    },
  );
}

/** For a resolver's `.catch`: whatever the loaders rejected with, as the client must see it. */
export function rethrowForClient(error: unknown): never {
  throw toGraphQLError(error);
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
    // The upstream's own code, passed on verbatim: not one of the gateway's.
    return new GraphQLError(error.message.slice(0, MAX_MESSAGE_LENGTH), {
      extensions: {
        code: error.code,
        status: error.status,
        ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
      },
    });
  }
  if (error instanceof UpstreamTimeoutError) {
    return fieldError(CODES.UPSTREAM_TIMEOUT, 'The animal store did not answer in time.');
  }
  if (error instanceof UpstreamCancelledError) {
    // Read by no one but the log: the client that would have read it has gone.
    return fieldError(CODES.CLIENT_GONE, 'The request was given up: the client went away.');
  }
  if (error instanceof UpstreamUnavailableError) {
    return fieldError(CODES.UPSTREAM_UNAVAILABLE, 'The animal store is unavailable.');
  }
  if (error instanceof UpstreamRateLimitedError) {
    return fieldError(
      CODES.UPSTREAM_RATE_LIMITED,
      'The animal store is rate limiting requests; retry later.',
      error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter },
    );
  }
  if (error instanceof UpstreamBadResponseError) {
    return fieldError(CODES.UPSTREAM_BAD_RESPONSE, 'The animal store sent an answer outside its contract.');
  }
  // Anything else is a bug of ours: it stays a plain Error, which Yoga masks as an unexpected error.
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * A subscription or a `@live` query on a gateway that serves none (LIVE=off), refused before
 * anything runs.
 */
export function subscriptionNotSupported(nodes?: ASTNode, what = 'subscriptions'): GraphQLError {
  return requestError(CODES.SUBSCRIPTION_NOT_SUPPORTED, `This gateway serves no ${what} (LIVE=off).`, {
    nodes,
  });
}

/** A `@live` query the gateway cannot watch, and why. */
export function liveQueryNotWatchable(why: string): GraphQLError {
  return requestError(CODES.LIVE_QUERY_NOT_WATCHABLE, `This query cannot be watched with @live: ${why}.`);
}

/**
 * A subscription asked for by a client that accepts no event stream (only JSON, or multipart/mixed,
 * which Yoga does not send subscriptions in), or inside a batch: its events could never be sent,
 * so it is refused before a live list opens.
 */
export function subscriptionNeedsStream(where: 'accept' | 'batch'): GraphQLError {
  const code = CODES.SUBSCRIPTION_NEEDS_STREAM;
  return where === 'batch'
    ? requestError(
        code,
        'A subscription or @live query cannot be part of a batch: send it on its own, with Accept: text/event-stream, or over graphql-ws.',
        { http: { status: code.inBatch } },
      )
    : requestError(
        code,
        'A subscription or @live query sends events: ask for them with Accept: text/event-stream, or over graphql-ws.',
      );
}

/**
 * An `Accept` that admits none of the forms the endpoint answers in: refused before anything runs
 * (GraphQL over HTTP recommends it), with the forms a client can ask for. Its body is JSON, which
 * RFC 9110 allows a 406 whatever `Accept` says, so that a GraphQL client can read the reason.
 */
export function notAcceptable(): GraphQLError {
  return requestError(
    CODES.NOT_ACCEPTABLE,
    'The Accept header admits none of the forms this endpoint answers in: application/graphql-response+json or application/json, in UTF-8; multipart/mixed or text/event-stream for @defer and @stream; text/event-stream for subscriptions.',
  );
}

/**
 * `@stream(initialCount:)` below 0 or null: the executor would fail on it as a bug of ours (an
 * internal error, a stack in the log) for what is the client's input.
 */
export function negativeInitialCount(value: number | null, nodes?: ASTNode): GraphQLError {
  return requestError(CODES.BAD_USER_INPUT, `@stream's initialCount must be 0 or more; got ${value}.`, {
    nodes,
    extensions: { argument: 'initialCount' },
  });
}

/**
 * A live subscription past a bound: the caller's key holds LIVE_MAX_PER_KEY open subscriptions on
 * this instance (429), or the instance holds LIVE_MAX_STREAMS (503, another instance may have room).
 */
export function subscriptionLimitExceeded(bound: 'per_key' | 'instance', limit: number): GraphQLError {
  return bound === 'per_key'
    ? requestError(
        CODES.SUBSCRIPTION_LIMIT_EXCEEDED,
        `This API key already holds ${limit} live subscriptions on this gateway (LIVE_MAX_PER_KEY).`,
        { extensions: { limit } },
      )
    : requestError(
        CODES.SUBSCRIPTIONS_AT_CAPACITY,
        `This gateway holds its ${limit} live subscriptions (LIVE_MAX_STREAMS); retry, or another instance.`,
        { extensions: { limit } },
      );
}
