import { type LiveEvent, LiveLimitError } from '../live/live-lists.ts';
import type { ListPetsQuery } from '../upstream/bodies.ts';
import type { Context } from './context.ts';
import { subscriptionLimitExceeded, subscriptionNotSupported } from './errors.ts';

/**
 * The caller's live list for `subscription { pets }`: refused like the query when the key is not
 * usable (before anything is watched), and with its own code past a bound.
 */
export function openLiveList(ctx: Context, query: ListPetsQuery): AsyncIterableIterator<LiveEvent> {
  if (!ctx.live) throw subscriptionNotSupported();
  if (ctx.authError || ctx.authorization === undefined) throw ctx.authError;
  try {
    return ctx.live.open(ctx.authorization, query);
  } catch (error) {
    if (error instanceof LiveLimitError) throw subscriptionLimitExceeded(error.bound, error.limit);
    throw error;
  }
}
