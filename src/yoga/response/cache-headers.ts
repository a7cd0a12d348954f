import type { Plugin } from 'graphql-yoga';
import { cacheControl, GRAPHQL_VARY, maxAgeSeconds } from '../../policy/cache-headers.ts';
import { etagOf, matchesETag, NOT_IN_304, tagged } from '../../policy/etag.ts';

const GRAPHQL_ANSWER = /^application\/(graphql-response\+)?json\b/i;
/** A result in parts (@defer, @stream): never stored, whatever its parts turn out to hold. */
const PARTS = /^(multipart\/mixed|text\/event-stream)\b/i;

/**
 * Sets `Cache-Control` and `Vary` on every answer Yoga gives at the GraphQL endpoint (results and
 * request errors alike; not the GraphiQL page, which has its own), and the ETag of a GET answer a
 * client may keep, answering 304 when If-None-Match names it (policy/etag.ts). The fast lane
 * writes the same through `cacheControl`, etag.ts and the `Vary` it learns from Yoga's answers. A
 * batch's answer may be kept only as long as each of its operations' could: all queries, none with
 * an error.
 */
export function useCacheHeaders(responseCacheTtlMs: number | undefined): Plugin {
  const maxAge = maxAgeSeconds(responseCacheTtlMs);
  const executed = new WeakMap<Request, { operationType: string; ok: boolean }>();
  return {
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (!request) return;
      const operationType = operationTypeOf(args.document.definitions, args.operationName);
      return {
        onExecuteDone({ result }) {
          if (!operationType || !('data' in result)) return;
          const ok = !result.errors?.length && result.data != null;
          const before = executed.get(request);
          executed.set(request, {
            operationType: before && before.operationType !== operationType ? 'mixed' : operationType,
            ok: ok && (before?.ok ?? true),
          });
        },
      };
    },
    onResultProcess({ request, result }) {
      // An operation of a batch refused before it ran (its rate limit, a trusted document) left
      // no mark above: its error in the array says so.
      if (!Array.isArray(result)) return;
      const answer = executed.get(request);
      if (answer && result.some((one) => 'errors' in one && one.errors?.length)) answer.ok = false;
    },
    onResponse({ request, response, setResponse, fetchAPI }) {
      const type = response.headers.get('content-type') ?? '';
      if (PARTS.test(type)) return inParts(response);
      if (!GRAPHQL_ANSWER.test(type)) return;
      const answer = executed.get(request);
      const control = cacheControl(
        { ok: response.status === 200 && answer?.ok === true, operationType: answer?.operationType },
        maxAge,
      );
      response.headers.set('cache-control', control);
      response.headers.set('vary', GRAPHQL_VARY);
      if (!tagged(request.method, control)) return;
      return response.text().then((text) => {
        const etag = etagOf(text);
        const fresh = !matchesETag(request.headers.get('if-none-match'), etag);
        // Copied name by name: Yoga's own headers may keep another spelling (`Content-Type`), which
        // a delete by the lower-case name would miss.
        const headers = new fetchAPI.Headers();
        response.headers.forEach((value, name) => {
          if (fresh || !NOT_IN_304.has(name.toLowerCase())) headers.set(name, value);
        });
        headers.set('etag', etag);
        setResponse(
          new fetchAPI.Response(fresh ? text : null, { status: fresh ? response.status : 304, headers }),
        );
      });
    },
  };
}

function operationTypeOf(
  definitions: readonly { kind: string; operation?: string; name?: { value: string } }[],
  operationName: string | null | undefined,
): string | undefined {
  for (const definition of definitions) {
    if (definition.kind !== 'OperationDefinition') continue;
    if (operationName == null || definition.name?.value === operationName) return definition.operation;
  }
  return undefined;
}

/**
 * An answer in parts, with its headers as the specifications define them. Yoga's SSE writer gives
 * its headers as an object (`Cache-Control: no-cache`, `Content-Encoding: none`, which names no
 * coding: RFC 9110 §8.4.1) that the adapter writes beside those set later under other spellings:
 * they are removed by their own spelling first, so one of each goes out.
 */
function inParts(response: Response): void {
  const { headers } = response;
  for (const name of ['Cache-Control', 'cache-control', 'Content-Encoding', 'content-encoding']) {
    if (name.toLowerCase() !== 'content-encoding' || headers.get(name) === 'none') headers.delete(name);
  }
  headers.set('cache-control', 'no-store');
  headers.set('vary', GRAPHQL_VARY);
  // nginx (and proxies that follow it) pass each part on as it comes instead of buffering.
  headers.set('x-accel-buffering', 'no');
}
