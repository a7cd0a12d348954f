/*
 * How one environment variable is read: each reader names the variable in its error, so a bad
 * value stops start-up with a line that says which and why (config.ts reads every variable once).
 */

/** A bad setting: start-up stops with this one-line message, naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** What start-up knows about the process beside its environment. */
/** The shortest secret taken (REDIS_KEY_SECRET, MCP_STATE_SECRET): 128 bits as hex. */
export const MIN_SECRET_LENGTH = 32;

export function nonEmpty(env: Record<string, string | undefined>, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export function origins(env: Record<string, string | undefined>, name: string): readonly string[] {
  const raw = nonEmpty(env, name);
  if (raw === undefined || raw === '*') return Object.freeze(['*']);
  const list = raw.split(',').map((entry) => {
    const origin = entry.trim();
    // `null`, the origin of sandboxed iframes and data: and file: pages, only when listed.
    if (origin === 'null') return origin;
    const url = URL.canParse(origin) ? new URL(origin) : undefined;
    if (url === undefined || url.origin === 'null') {
      throw new ConfigError(
        `${name} must be * or a comma-separated list of origins like https://app.example.com, got "${origin}"`,
      );
    }
    // An origin copied from the address bar ends in `/`: that is the origin it means. Anything
    // more names a page, not an origin, and a browser never sends it.
    const extra =
      url.pathname !== '/'
        ? `a path (${url.pathname})`
        : url.search !== ''
          ? `a query (${url.search})`
          : url.hash !== ''
            ? `a fragment (${url.hash})`
            : url.username !== ''
              ? 'credentials'
              : undefined;
    if (extra !== undefined) {
      throw new ConfigError(
        `${name}: "${origin}" has ${extra}; an origin is scheme://host[:port], here ${url.origin}`,
      );
    }
    return url.origin;
  });
  return Object.freeze(list);
}

/**
 * One of `values` (any case), or `fallback` when unset; typed as the choices, so no caller casts.
 * A value outside them stops start-up naming the variable and every choice.
 */
export function oneOf<const T extends string>(
  env: Record<string, string | undefined>,
  name: string,
  values: readonly T[],
  fallback: NoInfer<T>,
): T {
  const raw = nonEmpty(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    const choices = `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
    throw new ConfigError(`${name} must be ${choices}, got "${raw}"`);
  }
  return raw as T;
}

export function httpUrl(env: Record<string, string | undefined>, name: string): string | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return raw;
}

export function boolean(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'off', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off (or yes/no, true/false, 1/0), got "${raw}"`);
}

export function integer(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}
