import type { Counter, Histogram, LabelValues } from 'prom-client';

/*
 * One label set of a prom-client histogram or counter, looked up once. prom-client validates, sorts
 * and hashes the labels object on every observation (a closure and a string per call); on the fast
 * lane's path, four such observations per request cost more than the rest of the metrics put
 * together (docs/performance.md). A series handle computes prom-client's own hash once and adds to
 * the entry prom-client keeps under it, looked up afresh each time (so a `reset()` is seen); while
 * there is no entry yet, the observation goes through prom-client's public method, which makes it.
 * test/observability/series.test.ts holds the exposition to what prom-client's own methods give.
 */

interface HistogramEntry {
  sum: number;
  count: number;
  bucketValues: Record<number, number>;
}

interface Internals<Entry> {
  hashMap: Record<string, Entry | undefined>;
  sortedLabelNames: readonly string[];
}

/** prom-client's key for a label set (lib/util.js `hashObject` with the metric's sorted names). */
function hashOf(sortedLabelNames: readonly string[], labels: Record<string, unknown>): string {
  let hash = '';
  for (const name of sortedLabelNames) {
    const value = labels[name];
    if (value !== undefined) hash += `${name}:${value},`;
  }
  return hash;
}

/** Observes values into one label set of `histogram`, as `histogram.observe(labels, value)` would. */
export function histogramSeries<T extends string>(
  histogram: Histogram<T>,
  labels: LabelValues<T>,
): (value: number) => void {
  // Throws now, as observe would later, when a label is not one of the metric's.
  histogram.labels(labels);
  const internals = histogram as unknown as Internals<HistogramEntry> & { upperBounds: readonly number[] };
  const hash = hashOf(internals.sortedLabelNames, labels);
  const bounds = internals.upperBounds;
  return (value) => {
    const entry = internals.hashMap[hash];
    if (entry === undefined || !Number.isFinite(value)) return histogram.observe(labels, value);
    entry.sum += value;
    entry.count += 1;
    // The first bound the value is within; past the last, only the count (+Inf) holds it.
    for (let i = 0; i < bounds.length; i++) {
      const bound = bounds[i] as number;
      if (value <= bound) {
        (entry.bucketValues[bound] as number) += 1;
        break;
      }
    }
  };
}

/** Adds one to a label set of `counter`, as `counter.inc(labels)` would. */
export function counterSeries<T extends string>(counter: Counter<T>, labels: LabelValues<T>): () => void {
  counter.labels(labels);
  const internals = counter as unknown as Internals<{ value: number }>;
  const hash = hashOf(internals.sortedLabelNames, labels);
  return () => {
    const entry = internals.hashMap[hash];
    if (entry === undefined) counter.inc(labels);
    else entry.value += 1;
  };
}

/** One part of a series' key: a label value as the caller holds it. */
type KeyPart = string | number;

/**
 * Series handles by a key of up to three parts, the label values as the caller holds them: looked
 * up part by part, not as one string made per request (a new string is hashed on every lookup; a
 * label value the caller keeps, such as a prepared operation's name, is hashed once).
 * Bounded: past `max` handles it starts again, so label values that come from callers never grow it
 * without end (the metrics' own label budgets bound what the series themselves hold). Two calls
 * rather than one taking a maker, so a hit allocates no closure on the request path.
 */
export class SeriesCache<S> {
  readonly #max: number;
  #size = 0;
  #cache = new Map<KeyPart, Map<KeyPart, Map<KeyPart, S>>>();

  constructor(max = 1024) {
    this.#max = max;
  }

  get(a: KeyPart, b: KeyPart = '', c: KeyPart = ''): S | undefined {
    return this.#cache.get(a)?.get(b)?.get(c);
  }

  add(series: S, a: KeyPart, b: KeyPart = '', c: KeyPart = ''): S {
    if (this.#size >= this.#max) {
      this.#cache = new Map();
      this.#size = 0;
    }
    const byB = this.#cache.get(a) ?? new Map<KeyPart, Map<KeyPart, S>>();
    this.#cache.set(a, byB);
    const byC = byB.get(b) ?? new Map<KeyPart, S>();
    byB.set(b, byC);
    if (!byC.has(c)) this.#size++;
    byC.set(c, series);
    return series;
  }
}
