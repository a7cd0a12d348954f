import type { Plan, PlannedRoot } from '../execution/plan.ts';
import { dataOf, requestsOf } from '../execution/run-plan.ts';
import { cancelWhenClientGoes } from '../policy/client-gone.ts';
import { type Context, createContext, featuresNeedContext } from '../schema/context.ts';
import { needsContext } from '../schema/upstream-field.ts';
import { bearerAuthorization } from '../upstream/authorization.ts';
import type { ListPetsQuery, PetDto } from '../upstream/bodies.ts';
import type { UpstreamError } from '../upstream/errors.ts';
import type { Loaders } from '../upstream/loaders.ts';
import { answerClientGone, answerOperation, type Named, type Used } from './answer.ts';
import { type FastLaneOptions, rescue, type Served } from './hand-over.ts';

/**
 * A prepared query whose plan is one `GET /pets`, its field without hooks, beside any `__typename`:
 * the commonest operation, answered from the upstream client's callback (`listPetsThen`) with no
 * context, loaders or promise per request. The call goes through the client's every layer
 * (deadline, coalescing, breaker, retries, observers); only what the lane built around it is
 * skipped.
 */
export interface OneCall {
  readonly plan: Plan;
  /** The call's root, among the plan's roots. */
  readonly index: number;
}

/** What the log line and metrics are told of a one-call operation. */
const ONE_CALL: Used = { upstreamCalls: () => 1 };

const oneCalls = new WeakMap<Plan, OneCall | null>();

/** The plan's one call, when it is one (see OneCall); worked out once per plan. */
export function oneCallOf(plan: Plan | undefined): OneCall | undefined {
  if (plan === undefined) return undefined;
  let found = oneCalls.get(plan);
  if (found === undefined) {
    found = detect(plan) ?? null;
    oneCalls.set(plan, found);
  }
  return found ?? undefined;
}

function detect(plan: Plan): OneCall | undefined {
  if (plan.operation !== 'query') return undefined;
  let index = -1;
  for (let i = 0; i < plan.roots.length; i++) {
    const root = plan.roots[i] as PlannedRoot;
    if (root.kind === 'typename') continue;
    if (index !== -1 || root.call !== 'listPets' || needsContext(root.declaration)) return undefined;
    index = i;
  }
  return index === -1 ? undefined : { plan, index };
}

/** Whether the one-call path may serve requests: not when a per-request feature lives on the context. */
export function mayCallOnce(options: FastLaneOptions): boolean {
  return !featuresNeedContext(options.context, options.tracing);
}

/**
 * The call's request, as the plan builds it (execution/run-plan.ts `requestsOf`: the one fixed in
 * the plan, or the one the variables give); undefined when the usual path must word a refusal (a
 * cost over the limit, variables or an argument refused).
 */
export function requestOf(
  oneCall: OneCall,
  variables: Record<string, unknown>,
  maxCost: number,
): ListPetsQuery | undefined {
  return requestsOf(oneCall.plan, variables, maxCost)?.[oneCall.index] as ListPetsQuery | undefined;
}

/** The operation's `data` given its call's answer; undefined when it would not serialise. */
export function dataOfCall(
  oneCall: OneCall,
  pets: readonly PetDto[] | undefined,
): Record<string, unknown> | undefined {
  const results = new Array<unknown>(oneCall.plan.roots.length);
  results[oneCall.index] = pets;
  return dataOf(oneCall.plan, results);
}

/**
 * Gives `loaders` the outcome of a call this path already made, for the usual path to read from its
 * memo instead of calling again.
 */
export function adoptCall(
  loaders: Loaders,
  request: ListPetsQuery,
  error: UpstreamError | undefined,
  pets: PetDto[] | undefined,
): void {
  loaders.adoptList(request, error === undefined ? Promise.resolve(pets as PetDto[]) : Promise.reject(error));
}

/** The usual path (fast-lane.ts's `run`), on the context given. */
type Run<Found> = (
  served: Served,
  found: Found,
  options: FastLaneOptions,
  context?: Context,
) => Promise<void>;

/**
 * Serves a one-call operation. What it does not answer itself goes the usual way (`run`): a key
 * that is no bearer key or a request refused, before any call; a failed call, or an answer that
 * would not serialise, on a context whose loaders hold the call's outcome, so nothing is sent twice
 * and the answer is the one compiled execution and Yoga give.
 */
export function callOnce<Found extends { readonly named: Named }>(
  served: Served,
  found: Found,
  oneCall: OneCall,
  options: FastLaneOptions,
  run: Run<Found>,
): void {
  const { req, res } = served;
  options.lanes.served.oneCall++;
  const { authorization } = bearerAuthorization(req.headers.authorization);
  const request = requestOf(oneCall, served.variables, options.context.maxCost);
  if (authorization === undefined || request === undefined) {
    run(served, found, options).catch(() => rescue(req, res, served.body, options));
    return;
  }
  const client = options.context.upstream;
  const deadline = client.deadline();
  cancelWhenClientGoes(res, deadline);
  const executeStarted = performance.now();
  client.listPetsThen(authorization, request, deadline, (error, pets) => {
    deadline.release();
    try {
      if (res.destroyed) {
        const executeSeconds = (performance.now() - executeStarted) / 1000;
        return answerClientGone(req, found.named, ONE_CALL, served.started, executeSeconds, options);
      }
      const data = error === undefined ? dataOfCall(oneCall, pets) : undefined;
      if (data === undefined) {
        const context = createContext(req.headers.authorization, options.context, served.variables);
        adoptCall(context.loaders, request, error, pets);
        run(served, found, options, context).catch(() => rescue(req, res, served.body, options));
        return;
      }
      options.lanes.served.planned++;
      const executeSeconds = (performance.now() - executeStarted) / 1000;
      answerOperation(
        req,
        res,
        found.named,
        ONE_CALL,
        { data },
        served.headers,
        served.started,
        executeSeconds,
        options,
      );
    } catch {
      // A bug of ours; thrown here it would reach undici's handler, and the request would hang.
      rescue(req, res, served.body, options);
    }
  });
}
