import type { GraphQLResolveInfo } from 'graphql';
import { type LiveEvent, LiveLimitError } from '../live/live-lists.ts';
import type { ListPetsQuery } from '../upstream/bodies.ts';
import type { Context } from './context.ts';
import { refuseOverCost } from './cost.ts';
import { subscriptionLimitExceeded, subscriptionNotSupported } from './errors.ts';

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
