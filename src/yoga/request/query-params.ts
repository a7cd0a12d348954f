import type { Plugin } from 'graphql-yoga';
import { parseQueryParams } from '../../policy/query-params.ts';

/**
 * Replaces Yoga's GET parser, which drops `documentId` (so a persisted operation could not be run
 * over GET, as GraphQL-over-HTTP allows for queries) and answers a `variables` or `extensions`
 * parameter that is not JSON with an unexpected error (500). Yoga still refuses mutations over GET.
 */
export function useQueryParams(): Plugin {
  return {
    onRequestParse({ request, setRequestParser }) {
      if (request.method !== 'GET') return;
      setRequestParser(() => parseQueryParams(request.url));
    },
  };
}
