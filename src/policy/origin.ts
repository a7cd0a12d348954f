/**
 * The one Origin rule (CORS_ORIGINS), for CORS answers and WebSocket upgrades (MCP reads it more
 * strictly: originListed): a listed origin is admitted; `*` admits any site's origin but not `null` (sandboxed iframes, `data:` and
 * `file:` pages have no site), which is admitted only when listed.
 */
export function originAllowed(origins: readonly string[], origin: string): boolean {
  return origins.includes(origin) || (origins.includes('*') && origin !== 'null');
}

/**
 * Whether a request with this `Origin` header may open a long-lived stream: one without the
 * header comes from no browser page (a native app, a server), which CORS does not govern.
 */
export function originMayConnect(origins: readonly string[], origin: string | undefined): boolean {
  return origin === undefined || originAllowed(origins, origin);
}

/**
 * Whether a request with this `Origin` header may reach `/mcp`: without the header (desktop
 * clients, servers), yes; with it, only when CORS_ORIGINS names that origin. `*` lets any site's
 * pages read `/graphql` with keys they hold; on `/mcp` it would let any page a user visits drive
 * tools through a server on their machine (DNS rebinding), which the MCP specification asks servers
 * to refuse.
 */
export function originListed(origins: readonly string[], origin: string | undefined): boolean {
  return origin === undefined || origins.includes(origin);
}

const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a connection's local address is loopback: the listener takes requests from this machine only. */
function isLoopbackAddress(address: string | undefined): boolean {
  return (
    address !== undefined &&
    (address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.'))
  );
}

/**
 * Whether a request to a loopback listener comes from a page of this very address and port: the
 * Origin a loopback host, and the same host and port the request was sent to (`Host`). DNS
 * rebinding cannot produce it (the rebound page's Origin names the attacker's host), nor can a
 * page of another local port; the MCP specification asks servers on localhost to admit it.
 */
export function ownLoopbackOrigin(
  origin: string,
  host: string | undefined,
  localAddress: string | undefined,
): boolean {
  if (!isLoopbackAddress(localAddress)) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    LOOPBACK_HOSTNAMES.has(url.hostname) &&
    url.host === host
  );
}
