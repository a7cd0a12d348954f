import { GraphQLError } from 'graphql';

// The errors the gateway raises itself, before or instead of any upstream call. Upstream failures
// are typed and mapped in upstream/errors.ts. `http.status` is read (and removed) by Yoga: it sets
// the response status for request-level errors.

/** An argument the contract would refuse: no upstream call is made. */
export function badUserInput(message: string, argument: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', argument } });
}

/** An `Authorization` header that cannot be a bearer key: refused without calling the upstream. */
export function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'UNAUTHENTICATED', status: 401 } });
}

/** A field whose upstream route has passed its sunset date: refused without calling it. */
export function sunset(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'SUNSET', status: 410 } });
}

/** The request itself is unusable (body, encoding, media type): answered before GraphQL runs. */
export function badRequest(status: 400 | 413 | 415, code: string, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status } } });
}
