import type { GraphQLError } from 'graphql';
import { DEFAULT_LIMITS } from '../config.ts';
import type { Watches } from '../live/watches.ts';
import type { OperationSpan } from '../observability/tracing.ts';
import { bearerAuthorization } from '../upstream/authorization.ts';
import type { ResponseCacheOptions } from '../upstream/cached-calls.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { EntryView } from '../upstream/entry-loaders.ts';
import { createLoaders, type Loaders } from '../upstream/loaders.ts';
import { DeprecationNotices } from './deprecation.ts';
import { unauthenticated } from './errors.ts';

/** What every resolver receives. */
export interface Context {
  loaders: Loaders;
  /** The estimated cost above which the operation is refused: infinite under COST_MODE=measure. */
  maxCost: number;
  /** Representations one `_entities` field may carry (subgraph schema only). */
  maxRepresentations: number;
  /** The longest `createPet` name passed on (NAME_MAX_LENGTH); undefined: no maximum. */
  nameMaxLength: number | undefined;
  /** Deprecated fields this operation touched, reported in the response. */
  deprecations: DeprecationNotices;
  /** The clock (injectable so the sunset can be tested). */
  now: () => Date;
  /**
   * Upstream calls this operation has needed so far (retries not counted twice), for the operation
   * log: in a batch sharing loaders, those it asked for, whoever's load sent them.
   */
  upstreamCalls: () => number;
  /** In a batch sharing loaders: of `upstreamCalls`, those another entry asked for too. */
  sharedUpstreamCalls?: () => number;
  /** Ends the request's upstream deadline once execution is over (both lanes call it). */
  release: () => void;
  /** The client went away: cancels the request's upstream calls (see `Loaders.abandon`). */
  abandon: () => void;
  /** The operation's trace span when the fast lane opened it and hands the answer to Yoga. */
  operationSpan?: OperationSpan;
  /** The caller's canonical `Authorization`, or why there is none (`authError`). */
  authorization: string | undefined;
  authError: GraphQLError | undefined;
  /** Live lists (subscriptions); undefined when the gateway serves none. */
  live: Watches | undefined;
  /**
   * What the operation cost (policy/cost.ts CostReport), when COST_REPORT=on: set by the lane that
   * priced it, read by its log line.
   */
  cost: { readonly estimated: number; readonly actual?: number } | undefined;
}

export interface ContextDeps {
  upstream: UpstreamClient;
  maxCost: number;
  /** COST_REPORT=on: every answer, log line and /metrics says what each operation cost. */
  costReport: boolean;
  maxRepresentations: number;
  nameMaxLength: number | undefined;
  now: () => Date;
  /** Per-caller response cache for `pets`/`pet`; undefined = off. */
  cache?: ResponseCacheOptions;
  /** Live lists (subscriptions); undefined = none. */
  live?: Watches;
}

/**
 * Whether a per-request feature lives on the context, so that a path which calls the upstream
 * without one (fast-lane/one-call.ts) must step aside: the response cache (in the loaders) and
 * tracing (the operation's span). The next such feature is added here.
 */
export function featuresNeedContext(deps: ContextDeps, tracing: unknown): boolean {
  return deps.cache !== undefined || tracing !== undefined;
}

/**
 * What a request's context is built from, read once from the gateway's options: the same for Yoga's
 * lane and the fast lane.
 */
export function contextDepsOf(options: {
  upstream: UpstreamClient;
  limits?: {
    maxCost: number;
    costMode?: 'enforce' | 'measure';
    costReport?: boolean;
    maxRepresentations: number;
    nameMaxLength?: number | undefined;
  };
  now?: () => Date;
  cache?: ResponseCacheOptions;
  live?: Watches;
  /** A budget in points: its charges are settled to the actual cost, which the report prices. */
  costBudget?: unknown;
}): ContextDeps {
  const limits = options.limits ?? DEFAULT_LIMITS;
  return {
    upstream: options.upstream,
    // Measured, never refused: every lane compares the estimate with this one limit.
    maxCost: limits.costMode === 'measure' ? Number.POSITIVE_INFINITY : limits.maxCost,
    costReport: limits.costReport === true || options.costBudget !== undefined,
    maxRepresentations: limits.maxRepresentations,
    nameMaxLength: limits.nameMaxLength,
    now: options.now ?? (() => new Date()),
    ...(options.cache ? { cache: options.cache } : {}),
    ...(options.live ? { live: options.live } : {}),
  };
}

/**
 * Builds the per-request context: fresh loaders bound to the caller's `Authorization` header (the
 * same for both lanes: Yoga's and the fast lane's), or the loaders `share` holds, which the
 * operations of one batch share and whoever holds `share` releases. A
 * header that cannot be a bearer key (or none at all: every contract operation requires one) is
 * refused when an upstream call would be made, so introspection still works without a key.
 */
export function createContext(
  authorization: string | undefined,
  deps: ContextDeps,
  share?: { loaders?: Loaders },
): Context {
  // The canonical `Bearer <key>` is what goes upstream and what the response cache hashes.
  const { authorization: bearer, problem } = bearerAuthorization(authorization);
  const authError = problem === undefined ? undefined : unauthenticated(problem);
  // The operations of one batch share the caller's loaders (and release them together), each
  // through a view that counts the calls it asked for.
  const shared =
    share?.loaders ??
    createLoaders(deps.upstream, bearer, {
      ...(authError ? { authError } : { cache: deps.cache }),
      ...(deps.live ? { changes: deps.live } : {}),
    });
  if (share) share.loaders = shared;
  const entry = share ? new EntryView(shared) : undefined;
  const loaders = entry ?? shared;
  const deprecations = new DeprecationNotices(loaders);
  return {
    loaders,
    maxCost: deps.maxCost,
    maxRepresentations: deps.maxRepresentations,
    nameMaxLength: deps.nameMaxLength,
    deprecations,
    now: deps.now,
    upstreamCalls: () => loaders.upstreamCalls,
    sharedUpstreamCalls: entry ? () => entry.sharedUpstreamCalls : undefined,
    release: share ? noop : () => loaders.release(),
    // A batch's shared loaders are abandoned by whoever holds them, as they are released.
    abandon: share ? noop : () => loaders.abandon(),
    authorization: bearer,
    authError,
    live: deps.live,
    cost: undefined,
  };
}

const noop = () => {};
