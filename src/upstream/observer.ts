import type { ContractRoute, RouteName } from '../contract/routes.ts';
import type { BreakerState } from './breaker.ts';

/**
 * Route templates (src/contract/routes.ts, `name`): what observers see instead of paths, so ids never
 * reach a label or span name.
 */
export type UpstreamRoute = RouteName;

/** `cancelled`: its client went away and the attempt was given up; says nothing of the upstream. */
export type AttemptOutcome = 'ok' | 'http_error' | 'timeout' | 'unavailable' | 'bad_response' | 'cancelled';

/** How one attempt (one HTTP exchange) ended. */
export interface AttemptEnd {
  route: UpstreamRoute;
  outcome: AttemptOutcome;
  /** The HTTP status, when one arrived. */
  status?: number;
  durationMs: number;
}

/** Watches upstream traffic. Every hook is optional and must not throw. */
export interface UpstreamObserver {
  /** Before each attempt; may add request headers (e.g. `traceparent`); returns its end callback. */
  attempt?(route: ContractRoute, headers: Record<string, string>): ((end: AttemptEnd) => void) | undefined;
  /** A GET is about to be retried. */
  retry?(route: UpstreamRoute, reason: 'unavailable' | 'overloaded' | 'rate_limited'): void;
  /** A call was refused by the open circuit, without touching the network. */
  shortCircuit?(route: UpstreamRoute): void;
  /** The origin's breaker changed state. */
  breaker?(state: BreakerState): void;
  /** A GET was served by the same caller's identical GET already in flight: one request saved. */
  coalesced?(route: UpstreamRoute): void;
  /** The upstream accepted (2xx) or refused (401) the caller's `Authorization` header. */
  keyAnswered?(auth: string, accepted: boolean): void;
}
