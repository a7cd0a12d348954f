import type { Plugin } from 'graphql-yoga';
import { clientIdentity, type DeprecatedUse, deprecationHeaders } from '../../policy/deprecation-headers.ts';
import type { DeprecationNotice, DeprecationNotices } from '../../schema/deprecation.ts';

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
