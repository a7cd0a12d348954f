import { ConfigError, nonEmpty } from './env-values.ts';

/** UPSTREAM_URL: an http(s) URL whose path ends in `/v1`, without credentials, query or fragment. */
export function upstreamUrl(env: Record<string, string | undefined>): URL | undefined {
  const raw = nonEmpty(env, 'UPSTREAM_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`UPSTREAM_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`UPSTREAM_URL must use http or https, got "${url.protocol}"`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new ConfigError('UPSTREAM_URL must not carry credentials, a query or a fragment');
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/v1')) {
    throw new ConfigError(`UPSTREAM_URL path must end in /v1, got "${url.pathname}"`);
  }
  url.pathname = path;
  return url;
}
