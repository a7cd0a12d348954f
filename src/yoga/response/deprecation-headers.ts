import type { Plugin } from 'graphql-yoga';
import { PET_SUNSET } from '../../contract/animal-store.ts';
import type { DeprecationNotice, DeprecationNotices } from '../../schema/deprecation.ts';
import { PET_DEPRECATED_SINCE } from '../../schema/deprecation.ts';

/** A use of deprecated fields by one operation, with the client's self-declared name. */
export interface DeprecatedUse {
  fields: string[];
  clientName?: string;
  clientVersion?: string;
}

export interface DeprecationPluginOptions {
  /** Where a use of a deprecated field is reported. */
  onUse?: (use: DeprecatedUse) => void;
}

/**
 * Makes a deprecation visible to any client: `extensions.deprecations` in the result, and
 * `Deprecation` / `Sunset` headers (RFC 9745 / RFC 8594) on the HTTP response.
 */
export function useDeprecationNotices(options: DeprecationPluginOptions = {}): Plugin {
  const headersFor = new WeakMap<Request, DeprecationNotice[]>();
  return {
    onExecute() {
      return {
        onExecuteDone({ args, result, setResult }) {
          const notices = (args.contextValue as { deprecations?: DeprecationNotices }).deprecations;
          if (!notices || notices.size === 0 || !('data' in result)) return;
          const list = notices.list();
          const request = (args.contextValue as { request?: Request }).request;
          if (request) {
            headersFor.set(request, list);
            options.onUse?.({
              fields: list.map((notice) => notice.field),
              ...clientIdentity((name) => request.headers.get(name)),
            });
          }
          setResult({ ...result, extensions: { ...result.extensions, deprecations: list } });
        },
      };
    },
    onResponse({ request, response }) {
      const list = headersFor.get(request);
      if (!list?.[0]) return;
      const headers = deprecationHeaders(list[0]);
      response.headers.set('Deprecation', headers.deprecation);
      response.headers.set('Sunset', headers.sunset);
    },
  };
}

/** `graphql-client-name` / `-version`, bounded and limited to safe characters (they reach logs). */
export function clientIdentity(header: (name: string) => string | null): {
  clientName?: string;
  clientVersion?: string;
} {
  const clean = (value: string | null) => value?.replace(/[^\w.\-@/ ]/g, '').slice(0, 64) || undefined;
  const clientName = clean(header('graphql-client-name'));
  const clientVersion = clean(header('graphql-client-version'));
  return { ...(clientName ? { clientName } : {}), ...(clientVersion ? { clientVersion } : {}) };
}

/**
 * `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) for the first deprecated thing an operation
 * used: the upstream's own values when it sent them, else this gateway's.
 */
export function deprecationHeaders(notice: DeprecationNotice): { deprecation: string; sunset: string } {
  return {
    deprecation: notice.upstream?.deprecation ?? `@${Math.floor(PET_DEPRECATED_SINCE.getTime() / 1000)}`,
    sunset: notice.upstream?.sunset ?? PET_SUNSET.toUTCString(),
  };
}
