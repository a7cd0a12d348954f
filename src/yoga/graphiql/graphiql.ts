import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import {
  chooseEncoding,
  type Encoding,
  encodeAsync,
  VARY_ACCEPT_ENCODING,
} from '../../policy/compression.ts';
import { etagOf, matchesETag } from '../../policy/etag.ts';
import { isPath } from '../endpoints.ts';

/** The title of the explorer plugin bundled in Yoga's GraphiQL (@graphiql/plugin-explorer). */
const EXPLORER = 'GraphiQL Explorer';
/** The results' table view, a browser script inlined into the page (read with it, on first view). */
const TABLE_SCRIPT = new URL('./graphiql-table.js', import.meta.url);

interface Page {
  html: Buffer;
  etag: string;
  encoded: Map<Encoding, Promise<Buffer>>;
}

/**
 * Serves GraphiQL to browsers at `endpoint`, as Yoga would (`GET` asking for `text/html`), but
 * with what a 9 MB page needs on a slow link: it is rendered once, compressed once per encoding
 * (br ~2 MB, gzip ~2.4 MB, with yoga/response/compression.ts), and carries an ETag with
 * `Cache-Control: private, no-cache`, so a reload costs one 304 and no body. `private`: in the
 * embedded default the page holds that run's API key, which no shared cache should keep.
 *
 * GraphiQL opens with the explorer showing, so analysts can build a query by ticking fields: Yoga's
 * bundle already carries @graphiql/plugin-explorer, served from here like the rest (no CDN). The
 * response pane gets a table view of the answer's lists (graphiql-table.js), inlined the same way.
 *
 * `prefilled` (the embedded default's key in the header editor) is shown only to a request whose
 * Host is `localhost` or an IP address: a page at any other name may be another site's, whose DNS
 * answers with this machine's address (DNS rebinding) so that its scripts read the page as their own
 * origin's. Such a request gets the page with `options.headers` (the placeholder) instead.
 */
export function useGraphiQLPage(
  endpoint: string,
  options: GraphiQLOptions,
  prefilled?: { headers: string },
): Plugin {
  const pages = new Map<boolean, Promise<Page>>();
  // Imported on the first page view: the bundle holds GraphiQL's page and costs tens of MB of
  // RSS once loaded, which a gateway only apps call never needs.
  const render = async (withKey: boolean): Promise<Page> => {
    const [{ renderGraphiQL }, table] = await Promise.all([
      import('@graphql-yoga/render-graphiql'),
      readFile(TABLE_SCRIPT, 'utf8'),
    ]);
    const shown = withKey && prefilled ? { ...options, headers: prefilled.headers } : options;
    const html = Buffer.from(
      // Yoga's GraphiQL keeps the header editor (the key) in localStorage unless told not to, where
      // it outlives the tab.
      withScript(
        renderGraphiQL({ ...shown, shouldPersistHeaders: false, visiblePlugin: EXPLORER } as GraphiQLOptions),
        table,
      ),
    );
    const etag = etagOf(html);
    return { html, etag, encoded: new Map() };
  };
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (!asksForPage(request, endpoint)) return;
      const withKey = prefilled !== undefined && cannotBeRebound(new URL(request.url).hostname);
      let page = pages.get(withKey);
      if (!page) {
        page = render(withKey);
        pages.set(withKey, page);
      }
      return page.then((loaded) => answer(loaded, request, endResponse, fetchAPI));
    },
  };
}

/**
 * A host name no other site can point at this machine: `localhost` and its subdomains (browsers
 * answer them with loopback themselves, RFC 6761) and IP addresses (no DNS asked at all).
 */
export function cannotBeRebound(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  return isIP(name.replace(/^\[(.*)\]$/, '$1')) !== 0;
}

/**
 * Where GraphiQL is not served, the requests that would get its page (a browser's `GET` asking for
 * `text/html`) get 406 with `reason` as plain text: a person reads it, and an empty 406 told them
 * nothing. `reason` says how to get GraphiQL back.
 */
export function useGraphiQLRefusal(endpoint: string, reason: string): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (!asksForPage(request, endpoint)) return;
      endResponse(
        new fetchAPI.Response(`${reason}\n`, {
          status: 406,
          headers: {
            'content-type': 'text/plain; charset=utf-8',
            'cache-control': 'no-store',
            vary: 'Accept',
          },
        }),
      );
    },
  };
}

/**
 * Whether a request is a browser's asking for the page at `endpoint` (a `GET` accepting
 * `text/html`): answered with GraphiQL, or with the refusal where it is not served.
 */
export function asksForPage(request: Request, endpoint: string): boolean {
  if (request.method !== 'GET' || !request.headers.get('accept')?.includes('text/html')) return false;
  return isPath(request, endpoint) || isPath(request, `${endpoint}/`);
}

/** The page with one more inline script, run after GraphiQL's own. */
export function withScript(html: string, script: string): string {
  // An inline script ends at the first `</script`, whatever JavaScript around it means.
  if (/<\/script/i.test(script)) throw new Error('an inline script cannot contain </script');
  const end = html.lastIndexOf('</body>');
  if (end === -1) throw new Error('GraphiQL page without </body>');
  return `${html.slice(0, end)}<script>\n${script}\n</script>\n${html.slice(end)}`;
}

/**
 * The page may hold the embedded key: no other origin may frame it (clickjacking the key's use),
 * nor inject a `<base>`, a form target or a plugin. Scripts and styles are GraphiQL's own bundle,
 * inline, which needs inline code, `blob:` workers and `data:` assets: a script-src list would
 * only restate that, so the policy bounds what frames, forms and the base URL can do.
 */
const PAGE_SECURITY = {
  'content-security-policy': "frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** The page, a 304 for a cached copy, or the page compressed once per encoding. */
function answer(
  { html, etag, encoded }: Page,
  request: Request,
  endResponse: (response: Response) => void,
  fetchAPI: { Response: typeof Response },
): Promise<void> | void {
  const headers: Record<string, string> = {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'private, no-cache',
    etag,
    // The same URL answers JSON to a client that does not ask for HTML.
    vary: `Accept, ${VARY_ACCEPT_ENCODING}`,
    ...PAGE_SECURITY,
  };
  if (matchesETag(request.headers.get('if-none-match'), etag)) {
    return endResponse(new fetchAPI.Response(null, { status: 304, headers }));
  }
  const encoding = chooseEncoding(request.headers.get('accept-encoding') ?? undefined, html.byteLength);
  if (!encoding) return endResponse(new fetchAPI.Response(html as Uint8Array<ArrayBuffer>, { headers }));
  let body = encoded.get(encoding);
  if (!body) {
    body = encodeAsync(html, encoding);
    encoded.set(encoding, body);
  }
  return body.then((bytes) =>
    endResponse(
      new fetchAPI.Response(bytes as Uint8Array<ArrayBuffer>, {
        headers: { ...headers, 'content-encoding': encoding, 'content-length': String(bytes.byteLength) },
      }),
    ),
  );
}
