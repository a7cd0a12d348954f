/**
 * The one Origin rule (CORS_ORIGINS), for CORS answers, WebSocket upgrades and MCP: a listed
 * origin is admitted; `*` admits any site's origin but not `null` (sandboxed iframes, `data:` and
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
