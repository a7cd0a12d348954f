import type { Plugin } from 'graphql-yoga';

/**
 * What every GraphQL answer depends on besides its URL and body: the caller's key (the data is
 * theirs), Accept (the content type), Accept-Encoding (the compression) and Origin (the CORS
 * headers echo it). Sent whatever the request carried, so a cache never mixes two callers' answers.
 */
export const GRAPHQL_VARY = 'Accept, Accept-Encoding, Authorization, Origin';

/**
 * `Cache-Control` of a GraphQL answer. Errors and mutations are never stored. A query's data is per
 * caller, so never in a shared cache (`private`); a client may reuse it for as long as the gateway
 * itself would (the response cache's TTL, in whole seconds), and without the response cache must
 * ask again (`no-cache`).
 */
export function cacheControl(
  answer: { ok: boolean; operationType: string | undefined },
  maxAgeSeconds: number,
): string {
  if (!answer.ok || answer.operationType !== 'query') return 'no-store';
  return maxAgeSeconds > 0 ? `private, max-age=${maxAgeSeconds}` : 'private, no-cache';
}

/** The `max-age` a response cache with this TTL allows: whole seconds, 0 when off. */
export function maxAgeSeconds(responseCacheTtlMs: number | undefined): number {
  return responseCacheTtlMs === undefined ? 0 : Math.floor(responseCacheTtlMs / 1000);
}

const GRAPHQL_ANSWER = /^application\/(graphql-response\+)?json\b/i;

/**
 * Sets `Cache-Control` and `Vary` on every answer Yoga gives at the GraphQL endpoint (results and
 * request errors alike; not the GraphiQL page, which has its own). The fast lane writes the same
 * through `cacheControl` and the `Vary` it learns from Yoga's answers.
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
          executed.set(request, {
            operationType,
            ok: !result.errors?.length && result.data != null,
          });
        },
      };
    },
    onResponse({ request, response }) {
      if (!GRAPHQL_ANSWER.test(response.headers.get('content-type') ?? '')) return;
      const answer = executed.get(request);
      response.headers.set(
        'cache-control',
        cacheControl(
          { ok: response.status === 200 && answer?.ok === true, operationType: answer?.operationType },
          maxAge,
        ),
      );
      response.headers.set('vary', GRAPHQL_VARY);
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
