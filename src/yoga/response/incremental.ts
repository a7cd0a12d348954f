import { isAsyncIterable, mergeIncrementalResult } from '@graphql-tools/utils';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import {
  type ASTVisitor,
  type DirectiveNode,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLError,
  getOperationAST,
  Kind,
  type ValidationContext,
  visit,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { negativeInitialCount, subscriptionNeedsStream } from '../../schema/errors.ts';
import { liveOperation } from '../../schema/live.ts';
import type { Batches } from '../request/batches.ts';
import { acceptedMediaTypes, covers } from './accept.ts';

/** The media types that carry a result in parts: multipart/mixed (Apollo's clients) and SSE. */
const INCREMENTAL_MEDIA: ReadonlySet<string> = new Set(['multipart/mixed', 'text/event-stream']);

/**
 * `@defer` and `@stream`: Yoga's plugin executes them and answers in parts as multipart/mixed or
 * SSE, chosen by `Accept`. A client that accepts neither (an older app that sends `@defer`
 * without the header, or one behind a proxy that buffers), and every entry of a batch, gets the
 * whole result in one JSON answer: the parts are merged here as they arrive, never refused.
 */
export function useIncrementalDelivery(batches: Pick<Batches, 'isBatch'>): Plugin[] {
  // Requests whose operation is a subscription or a live query: its events never end, so they are
  // never merged.
  const subscriptions = new WeakSet<Request>();
  // A client that accepts no stream (only JSON), or a batch (answered as one JSON array), could
  // never be sent the events: refused before anything is watched.
  const refuseWithoutStream = (
    contextValue: unknown,
    stop: (result: { errors: GraphQLError[] }) => void,
  ): void => {
    const { request } = contextValue as { request?: Request };
    if (!request) return;
    subscriptions.add(request);
    if (batches.isBatch(request)) stop({ errors: [subscriptionNeedsStream('batch')] });
    else if (!acceptsStream(request.headers.get('accept')))
      stop({ errors: [subscriptionNeedsStream('accept')] });
  };
  return [
    useDeferStream(),
    {
      onValidate({ addValidationRule }) {
        addValidationRule(streamInitialCountRule);
      },
      // A variable's value is known only now: refused before anything runs, as the literal is.
      onExecute({ args, setResultAndStopExecution }) {
        if (liveOperation(args)) {
          refuseWithoutStream(args.contextValue, setResultAndStopExecution);
          return;
        }
        for (const name of initialCountVariables(args.document)) {
          const given = args.variableValues ?? {};
          // An explicit null is the client's value, not a call for the default.
          const value = name in given ? given[name] : defaultOf(args.document, args.operationName, name);
          if (value === null || (typeof value === 'number' && value < 0)) {
            setResultAndStopExecution({ errors: [negativeInitialCount(value)] });
            return;
          }
        }
      },
      onSubscribe({ args, setResultAndStopExecution }) {
        refuseWithoutStream(args.contextValue, setResultAndStopExecution);
      },
      onExecutionResult({ request, result, setResult }) {
        if (!isAsyncIterable(result) || subscriptions.has(request)) return;
        // A batch is one JSON array whatever the client accepts: an entry in parts would be lost.
        if (!batches.isBatch(request) && acceptsParts(request.headers.get('accept'))) return;
        return whole(result as AsyncIterable<ExecutionResult>).then(setResult);
      },
    },
  ];
}

/** `@stream`'s initialCount argument, when the directive is `@stream` and has one. */
function initialCountOf(node: DirectiveNode) {
  return node.name.value === 'stream'
    ? node.arguments?.find((argument) => argument.name.value === 'initialCount')?.value
    : undefined;
}

/** Refuses `@stream(initialCount: <negative literal>)` and `initialCount: null` at validation. */
function streamInitialCountRule(context: ValidationContext): ASTVisitor {
  return {
    Directive(node) {
      const value = initialCountOf(node);
      if (value?.kind === Kind.INT && Number(value.value) < 0)
        context.reportError(negativeInitialCount(Number(value.value), value));
      else if (value?.kind === Kind.NULL) context.reportError(negativeInitialCount(null, value));
    },
  };
}

/** A variable's default in the operation, when it is an integer literal or null. */
function defaultOf(document: DocumentNode, operationName: string | null | undefined, name: string) {
  const definition = getOperationAST(document, operationName)?.variableDefinitions?.find(
    (variable) => variable.variable.name.value === name,
  );
  const value = definition?.defaultValue;
  if (value?.kind === Kind.NULL) return null;
  return value?.kind === Kind.INT ? Number(value.value) : undefined;
}

/** The variables that give a `@stream` its initialCount, per document (almost always none). */
const countVariables = new WeakMap<DocumentNode, readonly string[]>();

function initialCountVariables(document: DocumentNode): readonly string[] {
  let names = countVariables.get(document);
  if (names === undefined) {
    const found: string[] = [];
    visit(document, {
      Directive(node) {
        const value = initialCountOf(node);
        if (value?.kind === Kind.VARIABLE) found.push(value.name.value);
      },
    });
    names = found;
    countVariables.set(document, names);
  }
  return names;
}

/**
 * Whether a subscription's events can be sent: `Accept` admits SSE, by name or by a wildcard, or
 * is absent. Yoga sends a subscription as SSE or not at all: it offers multipart/mixed for
 * results in parts (@defer, @stream) only.
 */
function acceptsStream(accept: string | null): boolean {
  return acceptedMediaTypes(accept).some((type) => covers(type, 'text/event-stream'));
}

/** Whether `Accept` names (not by a wildcard) a media type that carries a result in parts. */
export function acceptsParts(accept: string | null): boolean {
  return accept !== null && acceptedMediaTypes(accept).some((type) => INCREMENTAL_MEDIA.has(type));
}

/**
 * The parts of an answer, ending the operation's upstream deadline when the last one is out, not
 * when the first is: deferred fields call the upstream after it. Closed before its end (the client
 * went away and the stream was cancelled), nobody will read the rest: its calls are cancelled.
 */
export function endingWithLastPart<T>(
  parts: AsyncIterable<T>,
  ends: { release(): void; abandon(): void },
): AsyncIterableIterator<T> {
  const iterator = parts[Symbol.asyncIterator]();
  let over = false;
  const end = (early: boolean) => {
    if (over) return;
    over = true;
    if (early) ends.abandon();
    else ends.release();
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () =>
      iterator.next().then(
        (step) => {
          if (step.done) end(false);
          return step;
        },
        (error: unknown) => {
          end(false);
          throw error;
        },
      ),
    return: (value?: unknown) => {
      end(true);
      return iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined });
    },
  };
}

/** The parts of an incremental result merged into one result, as if nothing had been deferred. */
async function whole(parts: AsyncIterable<ExecutionResult>): Promise<ExecutionResult> {
  let merged: ExecutionResult | undefined;
  for await (const part of parts) {
    if (merged === undefined) merged = { ...part };
    else {
      mergeIncrementalResult({ incrementalResult: part, executionResult: merged });
      nullFailedFragments(part, merged);
    }
  }
  const { hasNext: _hasNext, ...result } = (merged ?? { data: null }) as ExecutionResult & {
    hasNext?: boolean;
  };
  return result;
}

type Path = ReadonlyArray<string | number>;

/**
 * A deferred fragment whose error reached its boundary comes as `data: null` at its path, which
 * the merge skips; undeferred, the same error nulls the object the fragment was on (the whole
 * `data` for a fragment on the operation, as a query refused for its cost answers `data: null`).
 */
function nullFailedFragments(part: ExecutionResult, merged: ExecutionResult): void {
  const items = (part as { incremental?: Array<{ data?: unknown; path?: Path; items?: unknown }> })
    .incremental;
  for (const item of items ?? []) {
    if (item.data !== null || item.items !== undefined) continue;
    const path = item.path ?? [];
    if (path.length === 0) {
      (merged as { data: unknown }).data = null;
      continue;
    }
    let parent: unknown = merged.data;
    for (const key of path.slice(0, -1)) parent = (parent as Record<string | number, unknown> | null)?.[key];
    if (parent !== null && typeof parent === 'object')
      (parent as Record<string | number, unknown>)[path[path.length - 1] as string | number] = null;
  }
}
