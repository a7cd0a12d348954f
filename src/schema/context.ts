import type { OperationSpan } from '../observability/tracing.ts';
import type { ResponseCacheOptions } from '../upstream/cached-calls.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { createLoaders, type Loaders } from '../upstream/loaders.ts';
import { bearerAuthorization } from './authorization.ts';
import { DeprecationNotices } from './deprecation.ts';

/** What every resolver receives. */
export interface Context {
  loaders: Loaders;
  /** The cost limit the complexity plugin enforces for this request. */
  maxCost: number;
  /** Representations one `_entities` field may carry (subgraph schema only). */
  maxRepresentations: number;
  /**
   * The operation's variables as the caller sent them, before coercion: pricing `_entities`, which
   * the complexity plugin does not wrap, computes the cost again from them (schema/subgraph.ts).
   */
  variables: Record<string, unknown>;
  /** Deprecated fields this operation touched, reported in the response. */
  deprecations: DeprecationNotices;
  /** The clock (injectable so the sunset can be tested). */
  now: () => Date;
  /** Upstream calls this request has made so far (retries not counted twice), for the operation log. */
  upstreamCalls: () => number;
  /** Ends the request's upstream deadline once execution is over (both lanes call it). */
  release: () => void;
  /** The operation's trace span when the fast lane opened it and hands the answer to Yoga. */
  operationSpan?: OperationSpan;
}

export interface ContextDeps {
  upstream: UpstreamClient;
  maxCost: number;
  maxRepresentations: number;
  now: () => Date;
  /** Per-caller response cache for `pets`/`pet`; undefined = off. */
  cache?: ResponseCacheOptions;
}

/**
 * Builds the per-request context: fresh loaders bound to the caller's `Authorization` header (the
 * same for both lanes: Yoga's and the fast lane's). A
 * header that cannot be a bearer key (or none at all: every contract operation requires one) is
 * refused when an upstream call would be made, so introspection still works without a key.
 */
export function createContext(
  authorization: string | undefined,
  deps: ContextDeps,
  variables: Record<string, unknown> = {},
): Context {
  // The canonical `Bearer <key>` is what goes upstream and what the response cache hashes.
  const { authorization: bearer, error: authError } = bearerAuthorization(authorization);
  const deprecations = new DeprecationNotices();
  const loaders = createLoaders(deps.upstream, bearer, {
    ...(authError ? { authError } : { cache: deps.cache }),
    deprecations,
  });
  return {
    loaders,
    maxCost: deps.maxCost,
    maxRepresentations: deps.maxRepresentations,
    variables,
    deprecations,
    now: deps.now,
    upstreamCalls: () => loaders.upstreamCalls,
    release: () => loaders.release(),
  };
}
