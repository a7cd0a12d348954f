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
