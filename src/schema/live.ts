import type { ServerResponse } from 'node:http';
import {
  DirectiveLocation,
  type DocumentNode,
  GraphQLBoolean,
  GraphQLDirective,
  GraphQLNonNull,
  getOperationAST,
  type OperationDefinitionNode,
  OperationTypeNode,
  valueFromAST,
} from 'graphql';
import { type LiveEvent, LiveLimitError, type LiveReader, type Watches } from '../live/watches.ts';
import type { ListPetsQuery } from '../upstream/bodies.ts';
import type { Context } from './context.ts';
import { subscriptionLimitExceeded, subscriptionNotSupported } from './errors.ts';

/**
 * The caller's live list for `subscription { pets }`: refused like the query when the key is not
 * usable (the cost is priced before any subscription opens: yoga/request/cost.ts), and with its own
 * code past a bound.
 */
export function openLiveList(ctx: Context, query: ListPetsQuery): AsyncIterableIterator<LiveEvent> {
  if (ctx.authError || ctx.authorization === undefined) throw ctx.authError;
  const auth = ctx.authorization;
  return openWatch(ctx, (live, reader) => live.open(auth, query, reader));
}

/**
 * Opens one of the caller's watches (a live list, a live query) on the hub, for the transport that
 * carries it; refused with its code on a gateway that serves none, and past a bound.
 */
export function openWatch<T>(ctx: Context, open: (live: Watches, reader: LiveReader) => T): T {
  if (!ctx.live) throw subscriptionNotSupported();
  try {
    return open(ctx.live, readerOf(ctx));
  } catch (error) {
    if (error instanceof LiveLimitError) throw subscriptionLimitExceeded(error.bound, error.limit);
    throw error;
  }
}

/**
 * Yoga's context carries the request (its signal aborts when the client leaves, or when the
 * WebSocket relay is done) and, over HTTP, node:http's response: a slow SSE reader's connection is
 * closed, since the `complete` it is sent would wait behind what it has not read.
 */
function readerOf(ctx: Context): LiveReader {
  const { request, res } = ctx as Context & { request?: Request; res?: ServerResponse };
  return {
    ...(request ? { signal: request.signal } : {}),
    ...(res ? { onSlow: () => res.destroy() } : {}),
  };
}

/**
 * `@live` on a query: its result now, then again each time it changes (docs/live.md). The name and
 * the `if` argument are those of graphql-live-query's directive, which Hive Gateway's live queries
 * and their clients send.
 */
export const GraphQLLiveDirective = new GraphQLDirective({
  name: 'live',
  description:
    'Sends the result now, then again each time it changes, over SSE or graphql-ws; off when `if` is false.',
  locations: [DirectiveLocation.QUERY],
  args: {
    if: {
      type: new GraphQLNonNull(GraphQLBoolean),
      defaultValue: true,
      description: 'Live when true or undefined.',
    },
  },
});

/** The operation `args` run, when it is a live query (`isLiveQuery`); undefined otherwise. */
export function liveOperation(args: {
  readonly document: DocumentNode;
  readonly operationName?: string | null | undefined;
  readonly variableValues?: Readonly<Record<string, unknown>> | null | undefined;
}): OperationDefinitionNode | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  return operation && isLiveQuery(operation, args.variableValues) ? operation : undefined;
}

/** Whether `operation` is a live query: a query whose `@live` is on, `if` read from its variables. */
export function isLiveQuery(
  operation: OperationDefinitionNode | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): boolean {
  if (operation?.operation !== OperationTypeNode.QUERY) return false;
  const directive = operation.directives?.find((node) => node.name.value === GraphQLLiveDirective.name);
  if (!directive) return false;
  const argument = directive.arguments?.find((node) => node.name.value === 'if');
  if (!argument) return true;
  // Validation has typed it Boolean!; a variable's value is the caller's, defaulted by the operation.
  return valueFromAST(argument.value, GraphQLBoolean, variables ?? undefined) !== false;
}
