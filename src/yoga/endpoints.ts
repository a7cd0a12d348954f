import type { Plugin } from 'graphql-yoga';

type FetchAPI = Parameters<NonNullable<Plugin['onRequest']>>[0]['fetchAPI'];

/**
 * Whether a request is for exactly `pathname`. Every GraphQL request passes through the operator
 * endpoints' hooks, so a substring test comes first and the URL is parsed only for candidates:
 * Yoga's own readiness and metrics hooks parse the URL (and test a URLPattern) on every request.
 */
export function isPath(request: Request, pathname: string): boolean {
  return request.url.includes(pathname) && new URL(request.url).pathname === pathname;
}

/**
 * Answers any request for `pathname` with what `respond` returns; every other request passes on
 * to Yoga. A `respond` that fails answers 503 with no body.
 */
export function useEndpoint(pathname: string, respond: (fetchAPI: FetchAPI) => Promise<Response>): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (!isPath(request, pathname)) return;
      return respond(fetchAPI).then(endResponse, () =>
        endResponse(new fetchAPI.Response(null, { status: 503 })),
      );
    },
  };
}
