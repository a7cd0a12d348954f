import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  Kind,
  type OperationDefinitionNode,
  print,
  type SelectionSetNode,
  visit,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { CODES } from '../../codes.ts';
import type { LiveEvent, Watched } from '../../live/watches.ts';
import { deprecationAnswer } from '../../policy/deprecation-headers.ts';
import { type Context, type ContextDeps, createContext } from '../../schema/context.ts';
import type { DeprecationNotice } from '../../schema/deprecation.ts';
import { liveQueryNotWatchable, subscriptionNotSupported, toGraphQLError } from '../../schema/errors.ts';
import { liveOperation, openWatch } from '../../schema/live.ts';

type Execute = (args: ExecutionArgs) => unknown;

/**
 * `query … @live`: the result now, then again each time it changes. The operation is a watch of
 * the live lists' hub (live/watches.ts), so everything a live list has, it has: one poll per
 * (key, operation, variables) for all its subscribers, a new result at once after a create through
 * the gateway on any instance, the per-key and per-instance bounds, slow readers, the drain, and
 * the end of the stream when the upstream refuses the key. Each poll runs the operation again as
 * its request ran it (the same execute function), with a context of its own: fresh loaders, and
 * never the response cache, whose answer may be older than the change that woke the poll.
 *
 * Runs after every plugin that may refuse the request (limits, cost, the stream it needs:
 * incremental.ts), so a refused query opens no watch.
 */
export function useLiveQueries(deps: ContextDeps): Plugin {
  const { cache: _never, ...pollDeps } = deps;
  return {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const operation = liveOperation(args);
      if (operation === undefined) return;
      const refusal = refusalOf(args, operation);
      if (refusal) return setResultAndStopExecution({ errors: [refusal] });
      const name = operation.name?.value;
      setExecuteFn((executeArgs) => watchQuery(executeArgs, name, executeFn as Execute, pollDeps));
    },
  };
}

/** Why the live query cannot be watched, or undefined when it can. */
function refusalOf(args: ExecutionArgs, operation: OperationDefinitionNode): GraphQLError | undefined {
  const ctx = args.contextValue as Context;
  if (!ctx.live) return subscriptionNotSupported(operation, 'live queries');
  if (incremental(args.document)) {
    return liveQueryNotWatchable(
      'it uses @defer or @stream; each new result is sent whole, so send the query without them',
    );
  }
  if (!readsTheStore(operation.selectionSet, args.document))
    return liveQueryNotWatchable('it reads nothing from the animal store, so its result never changes');
  // Every upstream field needs the key: without one there is nothing to watch for.
  if (ctx.authError || ctx.authorization === undefined) return ctx.authError;
  return undefined;
}

/** Opens the watch, waits for its first result (its notices make the stream's headers), then streams. */
async function watchQuery(
  args: ExecutionArgs,
  name: string | undefined,
  execute: Execute,
  deps: ContextDeps,
): Promise<ExecutionResult | AsyncIterableIterator<ExecutionResult>> {
  const ctx = args.contextValue as Context;
  const auth = ctx.authorization as string;
  let events: AsyncIterableIterator<LiveEvent<ExecutionResult>>;
  try {
    events = openWatch(ctx, (live, reader) =>
      live.watch(auth, watchedOperation(args, name, execute, deps, auth), reader),
    );
  } catch (error) {
    // Past a bound: the refusal is the answer, with its status.
    if (error instanceof GraphQLError) return { errors: [error] };
    throw error;
  }
  const first = await events.next();
  if (first.done) return events as unknown as AsyncIterableIterator<ExecutionResult>;
  const result = resultOf(first.value);
  const notices = (result.extensions as { deprecations?: DeprecationNotice[] } | undefined)?.deprecations;
  if (notices) ctx.deprecations.adopt(notices);
  return startingWith(result, events);
}

/** The operation as a watch: its key, and one run of it per poll. */
function watchedOperation(
  args: ExecutionArgs,
  name: string | undefined,
  execute: Execute,
  deps: ContextDeps,
  auth: string,
): Watched<ExecutionResult> {
  // Not the first subscriber's context, nor its request: the watch may outlive both.
  const { contextValue: _first, ...operation } = args;
  return {
    key: `query\u0000${name ?? ''}\u0000${textOf(args.document)}\u0000${JSON.stringify(args.variableValues ?? {})}`,
    label: { liveQuery: name ?? '(anonymous)' },
    poll: async () => {
      const context = createContext(auth, deps);
      try {
        const result = await execute({ ...operation, contextValue: context });
        if (isAsyncIterable(result)) throw new Error('a live query ran as a stream');
        return withNotices(result as ExecutionResult, context);
      } finally {
        context.release();
      }
    },
    read: (result) => ({
      text: JSON.stringify(result),
      final: result.errors?.some((error) => error.extensions?.code === CODES.UNAUTHENTICATED.code) ?? false,
    }),
  };
}

/** The run's deprecation notices in its result's extensions, as a plain query's answer has them. */
function withNotices(result: ExecutionResult, context: Context): ExecutionResult {
  const answer = deprecationAnswer(context.deprecations, () => null, undefined);
  if (!answer) return result;
  return { ...result, extensions: { ...result.extensions, deprecations: answer.notices } };
}

const resultOf = (event: LiveEvent<ExecutionResult>): ExecutionResult =>
  'value' in event ? event.value : { errors: [toGraphQLError(event.error) as GraphQLError] };

/** `first`, then the watch's events as results; `return()` ends the watch at once. */
function startingWith(
  first: ExecutionResult,
  events: AsyncIterableIterator<LiveEvent<ExecutionResult>>,
): AsyncIterableIterator<ExecutionResult> {
  let pending: ExecutionResult | undefined = first;
  return {
    next: async () => {
      if (pending !== undefined) {
        const value = pending;
        pending = undefined;
        return { value, done: false };
      }
      const step = await events.next();
      return step.done ? { value: undefined, done: true } : { value: resultOf(step.value), done: false };
    },
    return: async () => {
      pending = undefined;
      await events.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** The operation's text: what its subscribers share a watch by. */
const texts = new WeakMap<DocumentNode, string>();
function textOf(document: DocumentNode): string {
  let text = texts.get(document);
  if (text === undefined) {
    text = document.loc?.source.body ?? print(document);
    texts.set(document, text);
  }
  return text;
}

/** Whether the document holds `@defer` or `@stream`. */
function incremental(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value === 'defer' || node.name.value === 'stream') found = true;
    },
  });
  return found;
}

/** Whether a field of the operation, past its fragments, is one of the schema's (not `__typename`). */
function readsTheStore(
  selectionSet: SelectionSetNode,
  document: DocumentNode,
  seen = new Set<string>(),
): boolean {
  return selectionSet.selections.some((selection) => {
    if (selection.kind === Kind.FIELD) return !selection.name.value.startsWith('__');
    if (selection.kind === Kind.INLINE_FRAGMENT) return readsTheStore(selection.selectionSet, document, seen);
    const name = selection.name.value;
    if (seen.has(name)) return false;
    seen.add(name);
    const fragment = document.definitions.find(
      (definition) => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === name,
    );
    return (
      fragment?.kind === Kind.FRAGMENT_DEFINITION && readsTheStore(fragment.selectionSet, document, seen)
    );
  });
}
