import { COST_HEADERS } from './cost.ts';
import { originAllowed } from './origin.ts';

/** What a browser is told about one origin's request: the options for Yoga's CORS, or none at all. */
type CorsOptions =
  | {
      origin: string;
      credentials: boolean;
      methods: string[];
      allowedHeaders: string[];
      exposedHeaders: string[];
      maxAge: number;
    }
  | false;

/**
 * The CORS policy, per request. An allowed origin is echoed; any other request gets no CORS header
 * at all. Yoga's own list handling answers a refused origin `Access-Control-Allow-Origin: null`,
 * which admits exactly the pages whose origin is `null` (sandboxed iframes, `data:` and `file:`
 * pages), and with one origin listed names it to every caller. `null` is allowed only when listed:
 * `*` means any site's origin, not a page that has none.
 *
 * `isPage` names requests answered with a page for people (GraphiQL, and its refusal): they never
 * carry CORS headers, whatever the origin, so no other origin's script can read them (in the
 * embedded default the page holds that run's API key).
 */
export function corsPolicy(
  origins: readonly string[],
  isPage: (request: Request) => boolean,
): (request: Request) => CorsOptions {
  return (request) => {
    const origin = request.headers.get('origin');
    if (origin === null || isPage(request)) return false;
    if (!originAllowed(origins, origin)) return false;
    return { ...ALLOWED, origin };
  };
}

// Callers authenticate with a bearer header, never cookies, so CORS never allows credentials
// (Yoga's default reflects any origin *with* credentials). Browser clients may read the request
// id and the deprecation headers.
const ALLOWED = Object.freeze({
  credentials: false,
  methods: ['GET', 'POST'],
  allowedHeaders: [
    'content-type',
    'accept',
    'authorization',
    'graphql-client-name',
    'graphql-client-version',
    'x-request-id',
    'traceparent',
  ],
  exposedHeaders: ['x-request-id', 'deprecation', 'sunset', ...Object.values(COST_HEADERS)],
  maxAge: 600,
});
