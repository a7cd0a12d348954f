import { complexityFromQuery } from '@pothos/plugin-complexity';
import { type DocumentNode, type GraphQLResolveInfo, Kind } from 'graphql';
import { type LiveEvent, LiveLimitError } from '../live/live-lists.ts';
import type { ListPetsQuery } from '../upstream/bodies.ts';
import type { Context } from './context.ts';
import { costLimitExceeded, subscriptionLimitExceeded, subscriptionNotSupported } from './errors.ts';

/**
 * The caller's live list for `subscription { pets }`: refused like the query when the key is not
 * usable or the cost is over MAX_COST (before anything is watched), and with its own code past a
 * bound.
 */
export function openLiveList(
  ctx: Context,
  info: GraphQLResolveInfo,
  query: ListPetsQuery,
): AsyncIterableIterator<LiveEvent> {
  if (!ctx.live) throw subscriptionNotSupported();
  refuseOverCost(ctx, info);
  if (ctx.authError || ctx.authorization === undefined) throw ctx.authError;
  try {
    return ctx.live.open(ctx.authorization, query);
  } catch (error) {
    if (error instanceof LiveLimitError) throw subscriptionLimitExceeded(error.bound, error.limit);
    throw error;
  }
}

/**
 * The complexity plugin checks MAX_COST when a root field resolves, and a subscription's field
 * resolves only once its first event has come, after `subscribe` has opened the list and polled
 * the upstream: the operation is priced here first, as the plugin prices it.
 */
function refuseOverCost(ctx: Context, info: GraphQLResolveInfo): void {
  const document: DocumentNode = {
    kind: Kind.DOCUMENT,
    definitions: [info.operation, ...Object.values(info.fragments)],
  };
  // The variables as the caller sent them, which the plugin coerces itself: `info.variableValues`
  // are already coerced (an enum holds its internal value, the contract's `sold`), and coercing
  // them again refused every subscription that passed its status as a variable.
  const { complexity } = complexityFromQuery(document, {
    schema: info.schema,
    variables: ctx.variables,
  });
  if (complexity > ctx.maxCost) throw costLimitExceeded(complexity, ctx.maxCost);
}
