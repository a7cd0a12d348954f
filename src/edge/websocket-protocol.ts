import type { IncomingMessage } from 'node:http';
import { type DocumentNode, GraphQLError, parse } from 'graphql';
import { makeServer } from 'graphql-ws';
import type { WebSocket } from 'ws';
import { CODES } from '../codes.ts';
import type { ConnectionClose } from '../observability/metrics.ts';
import { bearerAuthorization } from '../upstream/authorization.ts';
import { type Forward, type Stoppable, withQueryText } from './websocket-relay.ts';

// graphql-ws's protocol as the gateway speaks it, apart from the sockets it runs on
// (edge/websocket.ts): what a connection_init must carry, how many operations run at once, and
// that every operation goes to Yoga whole.

/**
 * graphql-ws picks `subscribe` or `execute` from the document's operation type; every operation
 * goes to Yoga whole, whatever it is, so the document it sees is this one.
 */
const FORWARDED: DocumentNode = parse('subscription Forwarded { __typename }');

/** One socket's state: its key, its operations and its budget of messages this second. */
export interface Peer {
  ws: WebSocket;
  authorization: string | undefined;
  /** Why its connection_init was refused, for the close reason. */
  refusal: string | undefined;
  operations: number;
  windowStart: number;
  messages: number;
  /** A keep-alive ping is out and not yet answered. */
  awaitingPong: boolean;
  closing: boolean;
}

export type ProtocolServer = ReturnType<typeof makeServer<Record<string, unknown> | undefined, Extra>>;

/** What graphql-ws's server keeps of each socket. */
interface Extra {
  peer: Peer;
  req: IncomingMessage;
}

/** graphql-ws's protocol: the key taken at connection_init, each operation relayed to Yoga whole. */
export function protocolServer(
  options: {
    bounds: { maxOperations: number };
    initTimeoutMs?: number;
    onClose?: (reason: ConnectionClose) => void;
  },
  relay: (forward: Forward) => Stoppable,
): ProtocolServer {
  const { maxOperations } = options.bounds;
  return makeServer<Record<string, unknown> | undefined, Extra>({
    connectionInitWaitTimeout: options.initTimeoutMs ?? 3000,
    onConnect: (ctx) => {
      const { peer, req } = ctx.extra;
      const { authorization, problem } = bearerAuthorization(keyOf(ctx.connectionParams, req));
      if (problem !== undefined) {
        peer.refusal = 'connectionParams.authorization must be "Bearer <API key>"';
        options.onClose?.('unauthenticated');
        return false;
      }
      peer.authorization = authorization;
      return true;
    },
    onSubscribe: (ctx, _id, payload) => {
      const { peer, req } = ctx.extra;
      if (peer.operations >= maxOperations) {
        return [
          new GraphQLError(`At most ${maxOperations} operations run at once on one WebSocket.`, {
            extensions: { code: CODES.TOO_MANY_OPERATIONS.code, limit: maxOperations },
          }),
        ];
      }
      peer.operations++;
      return {
        schema: undefined as never,
        document: FORWARDED,
        contextValue: { payload, authorization: peer.authorization, req } satisfies Forward,
      };
    },
    subscribe: (args) => relay(args.contextValue as Forward),
    execute: (args) => relay(args.contextValue as Forward),
    // Yoga has already formatted each result (masked errors, codes): sent on as they are.
    onNext: (_ctx, _id, _payload, _args, result) => result,
    onOperation: (ctx, _id, _payload, _args, result) => {
      const { peer } = ctx.extra;
      return countedOut(result as Stoppable, peer);
    },
    jsonMessageReviver: withQueryText,
  });
}

/** The operation's events; the socket's count of operations falls when they end, however. */
function countedOut(events: Stoppable, peer: Peer): Stoppable {
  let counted = true;
  const release = () => {
    if (counted) peer.operations--;
    counted = false;
  };
  return {
    next: async () => {
      const result = await events.next().catch((error: unknown) => {
        release();
        throw error;
      });
      if (result.done) release();
      return result;
    },
    return: () => {
      release();
      return events.return();
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** `connectionParams`' authorization in any case (as HTTP headers are read), else the upgrade's header. */
function keyOf(params: Record<string, unknown> | undefined, req: IncomingMessage): string | undefined {
  for (const [name, value] of Object.entries(params ?? {})) {
    if (name.toLowerCase() === 'authorization') return typeof value === 'string' ? value : '';
  }
  return req.headers.authorization;
}
