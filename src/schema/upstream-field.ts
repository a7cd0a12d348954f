import type { WriteRoute } from '../contract/routes.ts';
import type { WriteRequest } from '../upstream/bodies.ts';
import type { Loaders, UpstreamCalls } from '../upstream/loaders.ts';
import type { Context } from './context.ts';
import { rethrowForClient } from './errors.ts';

/**
 * What each upstream call is asked for, and what it answers: read off loaders.ts `UpstreamCalls`,
 * the one list of the calls.
 */
export type UpstreamCallTypes = {
  [Call in keyof UpstreamCalls]: {
    request: Parameters<UpstreamCalls[Call]>[0];
    result: Awaited<ReturnType<UpstreamCalls[Call]>>;
  };
};

export type UpstreamCallName = keyof UpstreamCallTypes;

/**
 * What a root field does upstream, declared once beside the field: its resolver is derived from it
 * (`resolveUpstream`), and the planner (execution/plan.ts) reads it from the field's extensions to
 * compile operations into upstream calls without running the resolver. Nothing else about the
 * field's upstream behaviour may live in its resolver.
 */
export interface UpstreamField<
  Args,
  Call extends UpstreamCallName = UpstreamCallName,
  // What the field answers: the call's answer (a write's route says which: a field may name it
  // narrower), or what `answer` makes of it.
  Result = UpstreamCallTypes[Call]['result'],
> {
  /**
   * The per-request call the field makes: `listPets` (`GET /pets`), `getPet` (`GET /pets/{petId}`)
   * or `write`: a write route of src/contract/routes.ts, named in the request, whose `changes` say
   * what the loaders forget and tell after it (upstream/loaders.ts).
   */
  readonly call: Call;
  /**
   * A write's route, readable without building a request (what an MCP tool tells a model it
   * changes); `writeThrough` sets it and names it in every request, so it is written once.
   */
  readonly route?: Call extends 'write' ? WriteRoute : never;
  /**
   * The call's request from the field's arguments (as graphql-js coerced them). Throws a
   * GraphQLError for a value the contract refuses: then no call is made.
   */
  readonly request: (args: Args) => UpstreamCallTypes[Call]['request'];
  /**
   * What this gateway's configured limits refuse in the built request (a name past
   * NAME_MAX_LENGTH). Apart from `request` because the limits are the running gateway's, while a
   * request may be built once for a plan; throws a GraphQLError, and then no call is made.
   */
  readonly within?: (request: UpstreamCallTypes[Call]['request'], ctx: Context) => void;
  /** What must hold before the call (a sunset); may throw. */
  readonly before?: (ctx: Context) => void;
  /**
   * What to note once the call's request is built and the call goes out (a deprecation notice): never
   * for arguments refused before any call, whose answer is about them alone.
   */
  readonly calling?: (ctx: Context) => void;
  /**
   * What the field answers, from the call's answer and the request that was sent, when it is not
   * the call's answer itself: a write whose route answers nothing (a 204) answering the id it
   * removed, or `true`. Run by the resolver only: a plan steps aside for such a field (plan.ts).
   */
  readonly answer?: (
    result: UpstreamCallTypes[Call]['result'],
    request: UpstreamCallTypes[Call]['request'],
  ) => Result;
}

/**
 * A declaration whose field answers other than its call does (a `Boolean`, an `ID` for a write that
 * answers nothing) must say how (`answer`); one answering the call's answer, or a narrower type of
 * it, needs none.
 */
export type Declared<Args, Call extends UpstreamCallName, Result> = UpstreamField<Args, Call, Result> &
  ([Result] extends [UpstreamCallTypes[Call]['result']]
    ? unknown
    : { readonly answer: NonNullable<UpstreamField<Args, Call, Result>['answer']> });

/**
 * A field's request with its hooks, in their one order, for every path that builds it (the
 * resolver, a plan): `before`, then `build(input)` (the field's `request` of its arguments, or the
 * one a plan fixed), then `within` and `calling`. The hooks run on `ctx`; a path may leave `ctx`
 * out only for a field that `needsContext` says has none. A new hook is added here and to
 * `needsContext`, and every path runs it. `build` and `input` apart, not a closure: the resolver
 * and the plan run this per field per request.
 */
export function requestWithHooks<Call extends UpstreamCallName, Input>(
  field: Pick<UpstreamField<never, Call>, 'before' | 'within' | 'calling'>,
  build: (input: Input) => UpstreamCallTypes[Call]['request'],
  input: Input,
  ctx: Context | undefined,
): UpstreamCallTypes[Call]['request'] {
  if (ctx) field.before?.(ctx);
  const request = build(input);
  if (ctx) {
    field.within?.(request, ctx);
    field.calling?.(ctx);
  }
  return request;
}

/** Whether a field's call needs the request's context (it has a hook): see requestWithHooks. */
export function needsContext(field: Pick<UpstreamField<never>, 'before' | 'within' | 'calling'>): boolean {
  return field.before !== undefined || field.within !== undefined || field.calling !== undefined;
}

/** The key under which a field's `UpstreamField` sits in its GraphQL extensions. */
export const UPSTREAM_EXTENSION = 'upstream';

/** The route a field declares it writes through (`writeThrough`), if it declares one. */
export function declaredWriteRoute(field: {
  readonly extensions?: Readonly<Record<string, unknown>> | null;
}): WriteRoute | undefined {
  const declaration = field.extensions?.[UPSTREAM_EXTENSION] as UpstreamField<unknown> | undefined;
  return declaration?.call === 'write' ? declaration.route : undefined;
}

/**
 * A root field's options from its declaration, spread into `t.field({...})`: the declaration in the
 * field's extensions, for the planner, and the resolver derived from it. The field names its
 * upstream call here and nowhere else.
 */
export function fromUpstream<Args, Call extends UpstreamCallName, Result>(
  field: Declared<Args, Call, Result>,
) {
  return {
    extensions: { [UPSTREAM_EXTENSION]: field },
    resolve: resolveUpstream(field) as (root: unknown, args: Args, ctx: Context) => Promise<Result>,
  };
}

/**
 * A write's declaration with its route said once: the field's `route`, and the route of every
 * request `request` builds (which gives only the path's parameters and the body).
 */
export function writeThrough<Args, Result = UpstreamCallTypes['write']['result']>(
  route: WriteRoute,
  field: Omit<Declared<Args, 'write', Result>, 'call' | 'route' | 'request'> & {
    readonly request: (args: Args) => Omit<WriteRequest, 'route'>;
  },
): Declared<Args, 'write', Result> {
  const { request } = field;
  return { ...field, call: 'write', route, request: (args) => ({ route, ...request(args) }) } as Declared<
    Args,
    'write',
    Result
  >;
}

/**
 * The field's resolver: `before`, the request and its limits (`within`), `calling`, then the call
 * through the request's loaders, and its answer as the field's (`answer`).
 */
function resolveUpstream<Args, Call extends UpstreamCallName, Result>(
  field: UpstreamField<Args, Call, Result>,
): (root: unknown, args: Args, ctx: Context) => Promise<unknown> {
  const { answer } = field;
  return (_root, args, ctx) => {
    const request = requestWithHooks(field, field.request, args, ctx);
    const loaded = load(ctx, field.call, request);
    return (answer ? loaded.then((result) => answer(result as never, request)) : loaded).catch(
      rethrowForClient,
    );
  };
}

/**
 * Resolvers load through DataLoader (keys asked for in one tick make one batch, as graphql-js
 * resolves sibling fields); the DataLoaders share their memo with the plan's direct calls.
 */
function load(ctx: Context, call: UpstreamCallName, request: unknown): Promise<unknown> {
  return THROUGH_DATALOADER[call](ctx.loaders, request as never);
}

/** How a resolver makes each call: typed by the call, so a call added to UpstreamCalls must be added here. */
const THROUGH_DATALOADER: {
  [Call in UpstreamCallName]: (
    loaders: Loaders,
    request: UpstreamCallTypes[Call]['request'],
  ) => Promise<UpstreamCallTypes[Call]['result']>;
} = {
  listPets: (loaders, query) => loaders.petList.load(query),
  getPet: (loaders, id) => loaders.petById.load(id),
  write: (loaders, request) => loaders.write(request),
};
