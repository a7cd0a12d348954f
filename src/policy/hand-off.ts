import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import type { Context } from '../schema/context.ts';
import type { Loaders } from '../upstream/loaders.ts';
import type { Charge } from './cost-budget.ts';
import type { RateLimitDecision } from './rate-limit.ts';

/**
 * What the fast lane tells Yoga about a request it hands over, carried in Yoga's server context
 * (`lane`, the third argument of Yoga's node handler): one typed object per handed-over request,
 * read where Yoga needs it, instead of maps keyed by request that every lane had to consult.
 */
export interface HandOff {
  /**
   * The fast lane could serve this request next time: Yoga prepares its operation under these keys
   * once it has answered without errors, and learns the answer's headers.
   */
  toPrepare?: { operation: string; headers: string };
  /**
   * The same for a batch: each entry's operation key (undefined for one the fast lane could not
   * serve), and the key of the batch answer's headers.
   */
  toPrepareBatch?: { operations: ReadonlyArray<string | undefined>; headers: string };
  /**
   * The fast lane executed it, and the result is not the plain case (it has errors): Yoga answers
   * from this result and context, so nothing runs upstream twice.
   */
  executed?: { context: Context; result: ExecutionResult };
  /**
   * The fast lane ran a plan for this document (found by its shape), and the plan stepped aside:
   * Yoga executes the document on this context, whose loaders' memo holds what the plan received
   * (nothing is sent twice), and releases it.
   */
  ranOn?: Context;
  /** The GraphQL parameters the fast lane read from the body: Yoga's parser takes them as they are. */
  parsed?: GraphQLParams;
  /**
   * The fast lane ran this batch and one entry's result is not the plain case: Yoga answers it on
   * the same loaders (what they received is in their memo: nothing is sent twice) and takes each
   * entry's rate-limit decision as already made.
   */
  batch?: {
    loaders: Loaders | undefined;
    decisions: readonly RateLimitDecision[];
    /** Each entry's charge to the caller's budget, when the fast lane charged them. */
    charges?: readonly Charge[];
  };
  /** The fast lane charged the operation to its caller's budget: Yoga settles, or words, this charge. */
  charged?: Charge;
}

/**
 * Yoga's server context under the edge: node:http's request and response (none for an operation
 * relayed over a WebSocket or MCP), and what the fast lane handed over.
 */
export interface LaneContext {
  req?: IncomingMessage;
  res?: ServerResponse;
  lane?: HandOff;
  /**
   * Set on each operation relayed with a request it shares (a WebSocket's operations share its
   * upgrade request, an MCP request's tool calls share that request), so what is decided once per
   * request (the rate limit) is decided per operation instead.
   */
  sharedReq?: true;
  /**
   * Set on an operation its request already counted against the rate limit (an MCP tool call,
   * counted as its JSON-RPC message): the object that decision is kept under, which the rate limit
   * returns instead of counting the operation again.
   */
  rateLimitEntry?: object;
}

/**
 * The server context of an operation relayed to Yoga with a request it shares with others: a
 * WebSocket's operations (the upgrade request), an MCP request's tool calls.
 */
export type SharedRequestContext = Required<Pick<LaneContext, 'req' | 'sharedReq'>>;
