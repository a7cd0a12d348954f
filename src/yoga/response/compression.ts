import type { Plugin } from 'graphql-yoga';
import { chooseEncoding, encode, VARY_ACCEPT_ENCODING } from '../../policy/compression.ts';

/** GraphQL answers and error bodies; not event streams (each event must reach the client at once). */
const COMPRESSIBLE = /^(application\/(graphql-response\+)?json|text\/(plain|html))\b/i;

/**
 * Compresses Yoga's answers (GraphQL results, request errors) for clients that accept br or gzip,
 * with the choice and the bytes of compression.ts. A request without Accept-Encoding costs one
 * header read: the body is not touched. Responses that already carry a Content-Encoding (the
 * GraphiQL page, encoded once) pass as they are.
 */
export function useResponseCompression(): Plugin {
  return {
    onResponse({ request, response, setResponse, fetchAPI }) {
      if (request.method === 'HEAD' || response.status === 204 || response.status === 304) return;
      if (response.headers.has('content-encoding')) return;
      if (!COMPRESSIBLE.test(response.headers.get('content-type') ?? '')) return;
      if (!/\baccept-encoding\b/i.test(response.headers.get('vary') ?? '')) {
        response.headers.append('vary', VARY_ACCEPT_ENCODING);
      }
      const acceptEncoding = request.headers.get('accept-encoding') ?? undefined;
      if (!acceptEncoding) return;
      return response.text().then((text) => {
        const encoding = chooseEncoding(acceptEncoding, Buffer.byteLength(text));
        const headers = new fetchAPI.Headers(response.headers);
        let body: string | Uint8Array<ArrayBuffer> = text;
        if (encoding) {
          body = encode(text, encoding) as Uint8Array<ArrayBuffer>;
          headers.set('content-encoding', encoding);
          headers.set('content-length', String(body.byteLength));
        }
        // The original body has been read: the answer is a new Response either way.
        setResponse(
          new fetchAPI.Response(body, { status: response.status, statusText: response.statusText, headers }),
        );
      });
    },
  };
}
