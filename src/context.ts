import { bearerAuthorization } from './http/authorization.ts';
import { DeprecationNotices } from './schema/deprecation.ts';
import type { UpstreamClient } from './upstream/client.ts';
import { createLoaders, type Loaders, type ResponseCacheOptions } from './upstream/loaders.ts';

/** What every resolver receives. */
export interface Context {
  loaders: Loaders;
  /** The cost limit the complexity plugin enforces for this request. */
  maxCost: number;
  /** Deprecated fields this operation touched, reported in the response. */
  deprecations: DeprecationNotices;
  /** The clock (injectable so the sunset can be tested). */
  now: () => Date;
  /** Upstream calls this request has made so far (retries not counted twice), for the operation log. */
  upstreamCalls: () => number;
}

export interface ContextDeps {
  upstream: UpstreamClient;
  maxCost: number;
  now: () => Date;
  /** Per-caller response cache for `pets`/`pet`; undefined = off. */
  cache?: ResponseCacheOptions;
}

/**
 * Builds the per-request context: fresh loaders bound to the caller's `Authorization` header. A
 * header that cannot be a bearer key (or none at all: every contract operation requires one) is
 * refused when an upstream call would be made, so introspection still works without a key.
 */
export function createContext(request: Request, deps: ContextDeps): Context {
  const { authorization, error: authError } = bearerAuthorization(request.headers.get('authorization'));
  const deprecations = new DeprecationNotices();
  let calls = 0;
  return {
    loaders: createLoaders(
      countCalls(deps.upstream, () => calls++),
      authorization,
      {
        ...(authError ? { authError } : { cache: deps.cache }),
        onDeprecation: (headers) => deprecations.upstreamPet(headers),
      },
    ),
    maxCost: deps.maxCost,
    deprecations,
    now: deps.now,
    upstreamCalls: () => calls,
  };
}

/** The same client, counting this request's calls; a cache in the loaders keeps hits out of the count. */
function countCalls(client: UpstreamClient, onCall: () => void): UpstreamClient {
  return {
    listPets: (auth, query, signal) => {
      onCall();
      return client.listPets(auth, query, signal);
    },
    getPet: (auth, id, signal, onDeprecation) => {
      onCall();
      return client.getPet(auth, id, signal, onDeprecation);
    },
    createPet: (auth, pet, signal) => {
      onCall();
      return client.createPet(auth, pet, signal);
    },
    deadline: () => client.deadline(),
    probe: () => client.probe(),
    get breakerState() {
      return client.breakerState;
    },
    close: () => client.close(),
  };
}
