import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AttemptEnd, UpstreamObserver } from '../upstream/observer.ts';
import { histogramSeries, SeriesCache } from './series.ts';

const BREAKER_STATE = { closed: 0, 'half-open': 1, open: 2 } as const;

/** Upstream calls, retries, short circuits, coalesced GETs and breaker state. */
export function upstreamMetrics(registry: Registry): UpstreamObserver {
  const upstreamDuration = new Histogram({
    name: 'pet_gateway_upstream_request_duration_seconds',
    help: 'One HTTP exchange with the REST upstream, by route template, status and outcome.',
    labelNames: ['route', 'status', 'outcome'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'pet_gateway_upstream_retries_total',
    help: 'GET retries, by route template and reason.',
    labelNames: ['route', 'reason'],
    registers: [registry],
  });
  const shortCircuits = new Counter({
    name: 'pet_gateway_upstream_short_circuits_total',
    help: 'Calls refused by the open circuit breaker without touching the network.',
    labelNames: ['route'],
    registers: [registry],
  });
  const coalesced = new Counter({
    name: 'pet_gateway_upstream_coalesced_total',
    help: "GETs served by the same caller's identical GET already in flight: upstream requests saved.",
    labelNames: ['route'],
    registers: [registry],
  });
  const breakerState = new Gauge({
    name: 'pet_gateway_upstream_breaker_state',
    help: 'The upstream circuit breaker: 0 closed, 1 half-open, 2 open.',
    registers: [registry],
    // Each worker has its own breaker: across workers, the worst of them.
    aggregator: 'max',
  });
  const breakerTransitions = new Counter({
    name: 'pet_gateway_upstream_breaker_transitions_total',
    help: 'Circuit breaker state changes, by the state entered.',
    labelNames: ['state'],
    registers: [registry],
  });
  breakerState.set(0);
  const attemptSeries = new SeriesCache<(seconds: number) => void>();
  // One function for every attempt: no closure per upstream call.
  const observeAttempt = (end: AttemptEnd) => {
    const status = end.status ?? 'none';
    const series =
      attemptSeries.get(end.route, status, end.outcome) ??
      attemptSeries.add(
        histogramSeries(upstreamDuration, { route: end.route, status: String(status), outcome: end.outcome }),
        end.route,
        status,
        end.outcome,
      );
    series(end.durationMs / 1000);
  };
  return {
    attempt: () => observeAttempt,
    retry: (route, reason) => retries.inc({ route, reason }),
    shortCircuit: (route) => shortCircuits.inc({ route }),
    coalesced: (route) => coalesced.inc({ route }),
    breaker: (state) => {
      breakerState.set(BREAKER_STATE[state]);
      breakerTransitions.inc({ state });
    },
  };
}
