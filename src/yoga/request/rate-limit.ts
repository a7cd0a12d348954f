import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { RateLimit } from '../../policy/rate-limit.ts';
import { rateLimited, refusedKeysLimited } from '../../schema/errors.ts';

/**
 * Yoga's side of the limit: every GraphQL request is checked once its parameters are read, before
 * its document is parsed or anything runs. A refused request is answered 429 with `Retry-After`.
 */
export function useRateLimit(limit: RateLimit): Plugin {
  return {
    async onParams({ request, context }) {
      const req = (context as { req?: IncomingMessage }).req;
      const decision = await limit.check(req, request.headers.get('authorization'));
      if (decision.limited) {
        throw decision.reason === 'refused_keys'
          ? refusedKeysLimited(decision.retryAfterSeconds)
          : rateLimited(decision.retryAfterSeconds, decision.reason);
      }
    },
  };
}
