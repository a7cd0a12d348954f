import { getArgumentValues, getVariableValues } from 'graphql';
import type { Context } from '../schema/context.ts';
import { requestWithHooks, type UpstreamCallName } from '../schema/upstream-field.ts';
import { type Plan, type PlannedField, type PlannedRoot, priceOperation } from './plan.ts';

const ignore = () => {};

/** What a value's writer returns when it cannot serialise the value (the compiled path words it). */
const UNWRITABLE = Symbol('unwritable');

/**
 * Runs a plan (execution/plan.ts): coerces the variables with graphql-js's own function, prices the
 * operation as Yoga's lane prices it (execution/cost.ts), makes the calls through the request's memo
 * (in the order the resolvers' DataLoaders would, each once per request), and builds the tree
 * graphql-js would return as `data`. The caller serialises it with JSON.stringify, as compiled
 * results are (one native pass costs less than writing the text piece by piece).
 *
 * Returns undefined when compiled execution must answer instead: variables graphql-js would refuse,
 * an argument the contract refuses, a cost over the limit, an upstream failure, a value that would
 * not serialise. Every call made is in the loaders' memo, so nothing is sent twice.
 *
 * `names`: the answer is written under another document's response names, a document of the same
 * shape as the plan's (execution/shape.ts): each of the plan's keys to the other's.
 */
export async function runPlan(
  plan: Plan,
  ctx: Context,
  rawVariables: Record<string, unknown>,
  names?: ReadonlyMap<string, string>,
): Promise<Record<string, unknown> | undefined> {
  const { roots } = plan;
  const requests = requestsOf(plan, rawVariables, ctx.maxCost, ctx);
  if (requests === undefined) return undefined;

  const results: unknown[] = new Array(roots.length);
  let pending: Array<Promise<unknown>> | undefined;
  try {
    if (plan.operation === 'mutation') {
      for (let i = 0; i < roots.length; i++) {
        const root = roots[i] as PlannedRoot;
        if (root.kind === 'call') results[i] = await call(ctx, root.call, requests[i]);
      }
    } else {
      pending = new Array(roots.length);
      for (const name of plan.callOrder) {
        for (let i = 0; i < roots.length; i++) {
          const root = roots[i] as PlannedRoot;
          if (root.kind === 'call' && root.call === name) pending[i] = call(ctx, name, requests[i]);
        }
      }
      for (let i = 0; i < roots.length; i++) if (pending[i]) results[i] = await pending[i];
    }
  } catch {
    // The calls not awaited yet are the memo's: the compiled path reads them again, but when
    // nothing does (its client gone), a rejection left unread would end the process.
    if (pending) for (const call of pending) call?.catch(ignore);
    return undefined;
  }

  return dataOf(plan, results, names);
}

/**
 * The `data` graphql-js would return for a plan's roots, given each call root's answer at its index;
 * undefined when a value would not serialise (compiled execution words that). The fast lane's
 * one-call path (fast-lane/one-call.ts) writes its answer with it too.
 */
export function dataOf(
  plan: Plan,
  results: readonly unknown[],
  names?: ReadonlyMap<string, string>,
): Record<string, unknown> | undefined {
  const { roots } = plan;
  const data: Record<string, unknown> = {};
  for (let i = 0; i < roots.length; i++) {
    const root = roots[i] as PlannedRoot;
    const value = root.kind === 'typename' ? root.value : writeRoot(root, results[i], names);
    if (value === UNWRITABLE) return undefined;
    data[names ? (names.get(root.key) as string) : root.key] = value;
  }
  return data;
}

/**
 * Each call root's request, at its index, built as the resolvers would: the variables coerced by
 * graphql-js's own function, the operation priced as Yoga's lane prices it, the
 * field's hooks (`before`, `within`, `calling`) run on `ctx`, which may be left out only for a plan
 * whose fields have none. Undefined when compiled execution must word a refusal instead: variables
 * graphql-js would refuse, an argument the contract refuses, a cost over `maxCost`.
 */
export function requestsOf(
  plan: Plan,
  rawVariables: Record<string, unknown>,
  maxCost: number,
  ctx?: Context,
): unknown[] | undefined {
  const { roots } = plan;
  let variables: Record<string, unknown> = {};
  let cost = plan.fixedCost;
  if (plan.variables.length > 0) {
    const coerced = getVariableValues(plan.schema, plan.variables, rawVariables);
    if (coerced.errors) return undefined;
    variables = coerced.coerced;
    cost = priceOperation(plan.schema, plan.document, rawVariables);
  }
  if (cost === undefined || cost > maxCost) return undefined;

  const requests: unknown[] = new Array(roots.length);
  // A request the plan fixed was built by the same declaration's `request` (plan.ts).
  const build = (root: Extract<PlannedRoot, { kind: 'call' }>) =>
    ('request' in root
      ? root.request
      : root.declaration.request(getArgumentValues(root.field, root.node, variables))) as ReturnType<
      typeof root.declaration.request
    >;
  try {
    for (let i = 0; i < roots.length; i++) {
      const root = roots[i] as PlannedRoot;
      if (root.kind !== 'call') continue;
      requests[i] = requestWithHooks(root.declaration, build, root, ctx);
    }
  } catch {
    return undefined;
  }
  return requests;
}

/** One call through the request's memo (the same one the resolvers' DataLoaders use). */
function call(ctx: Context, name: UpstreamCallName, request: unknown): Promise<unknown> {
  // UpstreamCalls has one method per call name, taking that call's request.
  return ctx.loaders[name](request as never);
}

function writeRoot(
  root: Extract<PlannedRoot, { kind: 'call' }>,
  value: unknown,
  names: ReadonlyMap<string, string> | undefined,
): unknown {
  if (value === null || value === undefined) return root.nullable ? null : UNWRITABLE;
  if (!root.list) return writeObject(root.fields, value, names);
  if (!Array.isArray(value)) return UNWRITABLE;
  const items = new Array<unknown>(value.length);
  for (let i = 0; i < value.length; i++) {
    const item = writeObject(root.fields, value[i], names);
    if (item === UNWRITABLE) return UNWRITABLE;
    items[i] = item;
  }
  return items;
}

function writeObject(
  fields: readonly PlannedField[],
  object: unknown,
  names: ReadonlyMap<string, string> | undefined,
): unknown {
  // List items and fields are non-null in this schema (checked when planning).
  if (object === null || object === undefined) return UNWRITABLE;
  const source = object as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    let value: unknown;
    if (field.kind === 'typename') value = field.value;
    else {
      const raw = source[field.property];
      if (raw === null || raw === undefined) value = field.nullable ? null : UNWRITABLE;
      else if (field.kind === 'string') value = typeof raw === 'string' ? raw : UNWRITABLE;
      else value = field.names.get(raw) ?? UNWRITABLE;
    }
    if (value === UNWRITABLE) return UNWRITABLE;
    out[names ? (names.get(field.key) as string) : field.key] = value;
  }
  return out;
}
