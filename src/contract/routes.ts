/**
 * The animal store v1 contract's operations as data (schema/openapi.yaml's paths): what each one is
 * sent as, whether it may be sent again, what it carries and answers, and what a write changes. The
 * client's transport, retries and observers, the tests' upstream and the reference service read
 * their routes here; test/contract/routes.test.ts holds each one to the OpenAPI document. A route's
 * method is never read off its name.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a write changes at the upstream, so what the gateway must forget or tell after it succeeds. */
export interface RouteChanges {
  /** The caller's lists (`GET /pets` answers): cached lists are dropped, live lists asked again. */
  readonly lists: boolean;
  /**
   * The pet the route names (its `{petId}`, else the id of the pet it answers): a cached
   * `GET /pets/{petId}` answer for it is dropped.
   */
  readonly item: boolean;
}

export interface ContractRoute<Method extends HttpMethod = HttpMethod, Path extends string = string> {
  /** The OpenAPI `operationId`. */
  readonly operationId: string;
  readonly method: Method;
  /** The path below the base URL's `/v1`, parameters as `{name}`. */
  readonly path: Path;
  /**
   * `METHOD /path`: how logs, metrics and spans name the route (a template, so no id ever reaches a
   * label). Written from `method` and `path`, never by hand.
   */
  readonly name: `${Method} ${Path}`;
  /**
   * Whether sending it twice has the effect of sending it once: only then is it retried after a
   * failure or shared between callers' identical requests in flight. A write that is not sends once.
   */
  readonly idempotent: boolean;
  /** The request body's schema, if it has one. */
  readonly body?: 'NewPet';
  /** The success status and what its body is. */
  readonly success: { readonly status: number; readonly answer: 'Pet' | 'Pets' | 'none' };
  /** Set on a write: what it changes. */
  readonly changes?: RouteChanges;
  /** Deprecated upstream (it answers with `Deprecation` and `Sunset` headers). */
  readonly deprecated?: true;
}

/** A route written once: its name follows from its method and path. */
export function defineRoute<const Route extends Omit<ContractRoute, 'name'>>(
  route: Route,
): Route & { readonly name: `${Route['method']} ${Route['path']}` } {
  return Object.freeze({ ...route, name: `${route.method} ${route.path}` as const });
}

/** The contract's pet operations. */
export const ROUTES = {
  listPets: defineRoute({
    operationId: 'listPets',
    method: 'GET',
    path: '/pets',
    idempotent: true,
    success: { status: 200, answer: 'Pets' },
  }),
  createPet: defineRoute({
    operationId: 'createPet',
    method: 'POST',
    path: '/pets',
    idempotent: false,
    body: 'NewPet',
    success: { status: 201, answer: 'Pet' },
    // A new pet: its id was never answered before, so no cached answer of it can exist.
    changes: { lists: true, item: false },
  }),
  getPet: defineRoute({
    operationId: 'getPet',
    method: 'GET',
    path: '/pets/{petId}',
    idempotent: true,
    success: { status: 200, answer: 'Pet' },
    deprecated: true,
  }),
} as const;

/** A route the gateway writes through: one that declares what it changes. */
export type WriteRoute = ContractRoute & { readonly changes: RouteChanges };

/** How observers name a route: `METHOD /path`, a template. */
export type RouteName = ContractRoute['name'];

/**
 * The route's path with its parameters filled in, each percent-encoded: `/pets/{petId}` with
 * `{ petId: '7' }` is `/pets/7`. A parameter the path names but `params` lacks throws.
 */
export function pathOf(route: ContractRoute, params: Readonly<Record<string, string>> = {}): string {
  return route.path.replace(/\{(\w+)\}/g, (_whole, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`${route.name} needs its {${name}}`);
    return encodeURIComponent(value);
  });
}

/**
 * A matcher of the route's path as it arrives (below `prefix`, not percent-decoded): each
 * parameter one path segment, captured in the order the path names them.
 */
export function pathPattern(route: ContractRoute, prefix = ''): RegExp {
  const escaped = route.path
    .split(/\{\w+\}/)
    .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
    .join('([^/]+)');
  return new RegExp(`^${prefix.replace(/[.*+?^$()|[\]\\/]/g, '\\$&')}${escaped}$`);
}

/** The names of the route's path parameters, in order. */
export function pathParameters(route: ContractRoute): string[] {
  return [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
}

/** Each route's pattern under each prefix, compiled once: a test upstream matches every request. */
const patterns = new WeakMap<ContractRoute, Map<string, RegExp>>();

function patternOf(route: ContractRoute, prefix: string): RegExp {
  let byPrefix = patterns.get(route);
  if (byPrefix === undefined) {
    byPrefix = new Map();
    patterns.set(route, byPrefix);
  }
  let pattern = byPrefix.get(prefix);
  if (pattern === undefined) {
    pattern = pathPattern(route, prefix);
    byPrefix.set(prefix, pattern);
  }
  return pattern;
}

/**
 * The route of `routes` a request is for, and its path parameters by name; undefined when none is.
 * `path` as it arrives (not percent-decoded), below `prefix`.
 */
export function matchRoute<Route extends ContractRoute>(
  routes: Iterable<Route>,
  method: string | undefined,
  path: string,
  prefix = '',
): { route: Route; params: Record<string, string> } | undefined {
  for (const route of routes) {
    if (route.method !== method) continue;
    const match = patternOf(route, prefix).exec(path);
    if (match === null) continue;
    const names = pathParameters(route);
    return { route, params: Object.fromEntries(names.map((name, index) => [name, match[index + 1] ?? ''])) };
  }
  return undefined;
}
