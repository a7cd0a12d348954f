import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { type DeprecatedUse, deprecationAnswer } from '../../policy/deprecation-headers.ts';
import type { DeprecationNotices } from '../../schema/deprecation.ts';

export interface DeprecationPluginOptions {
  /** Where a use of a deprecated field is reported. */
  onUse?: (use: DeprecatedUse) => void;
}

/**
 * Makes a deprecation visible to any client: `extensions.deprecations` in the result, and
 * `Deprecation` / `Sunset` headers (RFC 9745 / RFC 8594) on the HTTP response.
 */
export function useDeprecationNotices(options: DeprecationPluginOptions = {}): Plugin {
  const headersFor = new WeakMap<Request, { deprecation: string; sunset: string }>();
  return {
    onExecute() {
      return {
        onExecuteDone({ args, result, setResult }) {
          // A live query's results carry their notices (yoga/response/live-queries.ts), which its
          // first one gave the context: the stream's headers and the report are made here.
          const live = isAsyncIterable(result);
          if (!live && !('data' in result)) return;
          const notices = (args.contextValue as { deprecations?: DeprecationNotices }).deprecations;
          // An operation with no HTTP request of its own (a WebSocket's) is not reported here.
          const request = (args.contextValue as { request?: Request }).request;
          const header = (name: string) => request?.headers.get(name) ?? null;
          const answer = deprecationAnswer(notices, header, request ? options.onUse : undefined);
          if (!answer) return;
          if (request) headersFor.set(request, answer.headers);
          if (!live)
            setResult({ ...result, extensions: { ...result.extensions, deprecations: answer.notices } });
        },
      };
    },
    onResponse({ request, response }) {
      const headers = headersFor.get(request);
      if (!headers) return;
      response.headers.set('Deprecation', headers.deprecation);
      response.headers.set('Sunset', headers.sunset);
    },
  };
}
