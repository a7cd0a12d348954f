import type { UpstreamClient } from './upstream/client.ts';
import { createLoaders, type Loaders } from './upstream/loaders.ts';

/** What every resolver receives. */
export interface Context {
  loaders: Loaders;
}

/** Builds the per-request context: the caller's `Authorization` header, verbatim, bound to fresh loaders. */
export function createContext(request: Request, upstream: UpstreamClient): Context {
  return { loaders: createLoaders(upstream, request.headers.get('authorization') ?? undefined) };
}
