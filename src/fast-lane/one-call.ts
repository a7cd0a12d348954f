import type { ServerResponse } from 'node:http';
import type { Plan, PlannedRoot } from '../execution/plan.ts';
import { dataOf, requestsOf } from '../execution/run-plan.ts';
import { cancelWhenClientGoes } from '../policy/client-gone.ts';
import { type Context, createContext, featuresNeedContext } from '../schema/context.ts';
import { needsContext } from '../schema/upstream-field.ts';
import { bearerAuthorization } from '../upstream/authorization.ts';
import type { ListPetsQuery, PetDto } from '../upstream/bodies.ts';
import type { UpstreamError } from '../upstream/errors.ts';
import type { Loaders } from '../upstream/loaders.ts';
import { answerClientGone, answerOperation, costOf, type Named, type Priced, type Used } from './answer.ts';
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
 * Serves a one-call operation: a batch of one for callAll. What it does not answer itself goes the
 * usual way (`run`): a key that is no bearer key or a request refused, before any call; a failed
 * call, or an answer that would not serialise, on a context whose loaders hold the call's outcome,
 * so nothing is sent twice and the answer is the one compiled execution and Yoga give.
 */
export function callOnce<Found extends Priced & { readonly named: Named }>(
  served: Served,
  found: Found,
  oneCall: OneCall,
  options: FastLaneOptions,
  run: Run<Found>,
): void {
  const { req, res } = served;
  const { authorization } = bearerAuthorization(req.headers.authorization);
  const request = requestOf(oneCall, served.variables, options.context.maxCost);
  const usual = (context?: Context) =>
    run(served, found, options, context).catch(() => rescue(req, res, served.body, options));
  if (authorization === undefined || request === undefined) {
    options.lanes.served.oneCall++;
    usual();
    return;
  }
  // What the log line is told: the one call, and the cost when answers report it.
  const used = (data?: unknown): Used =>
    options.context.costReport ? { ...ONE_CALL, cost: costOf(found, data, served.charged) } : ONE_CALL;
  callAll(res, authorization, [{ oneCall, request }], options, {
    gone: (executeSeconds) =>
      answerClientGone(req, found.named, used(), served.started, executeSeconds, options),
    answered: ([data], executeSeconds) =>
      answerOperation(
        req,
        res,
        found.named,
        used(data),
        { data: data as Record<string, unknown> },
        served.headers,
        served.started,
        executeSeconds,
        options,
      ),
    usual: (adopt) => {
      const context = createContext(req.headers.authorization, options.context);
      adopt(context.loaders);
      usual(context);
    },
    rescue: () => rescue(req, res, served.body, options),
  });
}

/** What callAll's caller does with the outcome: each way it can end, said once by the caller. */
export interface CallsEnd {
  /** Nobody is left to answer: only the log line and metrics say what happened. */
  gone(executeSeconds: number): void;
  /** Every call answered and serialised: each operation's `data`, in order. */
  answered(data: ReadonlyArray<Record<string, unknown>>, executeSeconds: number): void;
  /**
   * A call failed, or an answer would not serialise: the usual way, given what hands its loaders
   * every call's outcome and the request's deadline (before they call anything).
   */
  usual(adopt: (loaders: Loaders) => void): void;
  /** A bug of ours: answered as one, never a hang. */
  rescue(): void;
}

/**
 * The one engine of the one-call paths (a single operation, a batch of them): each operation's
 * `GET /pets` through the client's callback under the request's deadline, cancelled when the
 * client goes; then one of `end`'s outcomes, the deadline released, or adopted by the usual way's
 * loaders. It counts what the lanes count.
 */
export function callAll(
  res: ServerResponse,
  authorization: string,
  calls: ReadonlyArray<{ oneCall: OneCall; request: ListPetsQuery }>,
  options: FastLaneOptions,
  end: CallsEnd,
): void {
  options.lanes.served.oneCall++;
  const client = options.context.upstream;
  const deadline = client.deadline();
  cancelWhenClientGoes(res, deadline);
  const executeStarted = performance.now();
  const outcomes = new Array<Outcome>(calls.length);
  let waiting = calls.length;
  const settle = () => {
    const executeSeconds = (performance.now() - executeStarted) / 1000;
    if (res.destroyed) {
      deadline.release();
      return end.gone(executeSeconds);
    }
    const data: Array<Record<string, unknown>> = [];
    for (const [index, { oneCall }] of calls.entries()) {
      const { error, pets } = outcomes[index] as Outcome;
      const answer = error === undefined ? dataOfCall(oneCall, pets) : undefined;
      if (answer === undefined) {
        // The usual way goes on under this request's deadline, in the loaders that adopt it with
        // every call's outcome, and they release it: never a second deadline for one request.
        return end.usual((loaders) => {
          loaders.adoptDeadline(deadline);
          calls.forEach(({ request }, at) => {
            const outcome = outcomes[at] as Outcome;
            adoptCall(loaders, request, outcome.error, outcome.pets);
          });
        });
      }
      data.push(answer);
    }
    deadline.release();
    options.lanes.served.planned++;
    end.answered(data, executeSeconds);
  };
  for (const [index, { request }] of calls.entries()) {
    client.listPetsThen(authorization, request, deadline, (error, pets) => {
      outcomes[index] = { error, pets };
      if (--waiting > 0) return;
      try {
        settle();
      } catch {
        // A bug of ours; thrown here it would reach undici's handler, and the request would hang.
        deadline.release();
        end.rescue();
      }
    });
  }
}

/** How one call ended. */
interface Outcome {
  readonly error: UpstreamError | undefined;
  readonly pets: PetDto[] | undefined;
}
