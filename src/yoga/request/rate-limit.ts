import type { Plugin } from 'graphql-yoga';
import type { LaneContext } from '../../policy/hand-off.ts';
import { type RateLimit, refusalOf } from '../../policy/rate-limit.ts';

/**
 * Yoga's side of the limit: every GraphQL request (each operation of a batch) is checked once its parameters are read, before
 * its document is parsed or anything runs. A refused request is answered 429 with `Retry-After`.
 */
export function useRateLimit(
  limit: RateLimit,
  batchEntryOf: (context: object) => { readonly index: number } | undefined,
): Plugin {
  return {
    async onParams({ request, context }) {
      const { req, sharedReq, lane, rateLimitEntry } = context as LaneContext;
      const batchEntry = batchEntryOf(context);
      // Each operation of a batch, a WebSocket or an MCP request counts: its own decision, under
      // its own context (an MCP tool call's was made as its message was counted); a batch the
      // fast lane handed over was decided there, entry by entry.
      const entry = rateLimitEntry ?? (batchEntry !== undefined || sharedReq ? context : undefined);
      const decision =
        (batchEntry && lane?.batch?.decisions[batchEntry.index]) ??
        (await limit.check(req, request.headers.get('authorization'), entry));
      if (decision.limited) throw refusalOf(decision);
    },
  };
}
