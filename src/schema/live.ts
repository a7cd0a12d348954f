import type { ServerResponse } from 'node:http';
import { type LiveEvent, LiveLimitError, type LiveReader } from '../live/live-lists.ts';
import type { ListPetsQuery } from '../upstream/bodies.ts';
import type { Context } from './context.ts';
import { subscriptionLimitExceeded, subscriptionNotSupported } from './errors.ts';

/**
 * The caller's live list for `subscription { pets }`: refused like the query when the key is not
 * usable (the cost is priced before any subscription opens: yoga/request/cost.ts), and with its own
 * code past a bound.
 */
export function openLiveList(ctx: Context, query: ListPetsQuery): AsyncIterableIterator<LiveEvent> {
  if (!ctx.live) throw subscriptionNotSupported();
  if (ctx.authError || ctx.authorization === undefined) throw ctx.authError;
  try {
    return ctx.live.open(ctx.authorization, query, readerOf(ctx));
  } catch (error) {
    if (error instanceof LiveLimitError) throw subscriptionLimitExceeded(error.bound, error.limit);
    throw error;
  }
}

/**
 * Yoga's context carries the request (its signal aborts when the client leaves, or when the
 * WebSocket relay is done) and, over HTTP, node:http's response: a slow SSE reader's connection is
 * closed, since the `complete` it is sent would wait behind what it has not read.
 */
function readerOf(ctx: Context): LiveReader {
  const { request, res } = ctx as Context & { request?: Request; res?: ServerResponse };
  return {
    ...(request ? { signal: request.signal } : {}),
    ...(res ? { onSlow: () => res.destroy() } : {}),
  };
}
