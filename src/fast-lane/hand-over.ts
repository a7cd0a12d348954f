import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLParams } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.ts';
import type { Tracing } from '../observability/tracing.ts';
import type { CostBudget, TakenCharge } from '../policy/cost-budget.ts';
import type { DeprecatedUse } from '../policy/deprecation-headers.ts';
import type { HandOff } from '../policy/hand-off.ts';
import type { Lanes } from '../policy/prepared-operations.ts';
import type { RateLimit } from '../policy/rate-limit.ts';
import type { ContextDeps } from '../schema/context.ts';

// What both of the fast lane's paths (one operation, a batch) share: their options, and how a
// request they do not serve goes to Yoga.

/**
 * Yoga's node handler: the server of record, for every request the fast lane does not answer; what
 * the fast lane learned about the request goes with it, in Yoga's server context.
 */
export type YogaHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  ...context: Array<{ lane: HandOff }>
) => unknown;

export interface FastLaneOptions {
  lanes: Lanes;
  yoga: YogaHandler;
  context: ContextDeps;
  maxBodyBytes: number;
  /** Operations one batch may hold (MAX_BATCH_OPERATIONS): a larger batch is Yoga's to refuse. */
  maxBatchOperations: number;
  logger: Logger;
  metrics?: Metrics;
  tracing?: Tracing;
  /** The per-key limit, consulted before execution; Yoga words a refusal. */
  rateLimit?: RateLimit;
  /** Each caller's budget in points, charged before execution; Yoga words a refusal. */
  costBudget?: CostBudget;
  /** A request's client address, for the log line. */
  clientAddress: (req: IncomingMessage) => string;
  /** `max-age` of a successful query's answer (the response cache's TTL in seconds); 0: none. */
  cacheMaxAgeSeconds: number;
  onDeprecatedUse: (use: DeprecatedUse) => void;
}

/**
 * Gives the request to Yoga with what the fast lane knows of it (its parameters, when a POST body was
 * a plain one, spare Yoga's parser a second decode and parse), and the body when the fast lane has
 * read it.
 */
export function handOver(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  options: FastLaneOptions,
  handOff?: HandOff,
): void {
  options.lanes.served.yoga++;
  // @whatwg-node/server builds the fetch Request from `req.body` when a framework has read it.
  if (body) (req as IncomingMessage & { body?: Buffer }).body = body;
  if (handOff) options.yoga(req, res, { lane: handOff });
  else options.yoga(req, res);
}

/** What the fast lane knows of a request it serves, once its parameters are read. */
export interface Served {
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer | undefined;
  parsed: GraphQLParams;
  variables: Record<string, unknown>;
  /** The answer's headers, learned from Yoga's. */
  headers: readonly string[];
  started: number;
  /** Its charge to the caller's budget (COST_BUDGET_PER_MINUTE), settled when it is answered. */
  charged?: TakenCharge;
}

/**
 * Only a bug of ours gets here (the lane hands every unexpected case to Yoga): Yoga answers the
 * request, which may run the operation again, when nothing has been written yet.
 */
export function rescue(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  options: FastLaneOptions,
): void {
  if (res.headersSent) res.destroy();
  else handOver(req, res, body, options);
}

export function headerValue(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return typeof value === 'string' ? value : null;
}
