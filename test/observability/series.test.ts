// @tier unit

import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { counterSeries, histogramSeries, SeriesCache } from '../../src/observability/series.ts';

/** The same histogram and counter in two registries: one fed by prom-client's methods, one by series handles. */
function twins() {
  const make = () => {
    const registry = new Registry();
    const histogram = new Histogram({
      name: 'h_seconds',
      help: 'h',
      labelNames: ['route', 'status'],
      buckets: [0.001, 0.01, 0.1, 1],
      registers: [registry],
    });
    const counter = new Counter({
      name: 'c_total',
      help: 'c',
      labelNames: ['name', 'type'],
      registers: [registry],
    });
    return { registry, histogram, counter };
  };
  return { plain: make(), handled: make() };
}

describe('series handles', () => {
  it("expose exactly what prom-client's own observe and inc expose, at every bucket edge", async () => {
    const { plain, handled } = twins();
    const labelSets = [
      { route: 'GET /pets', status: '200' },
      { route: 'POST /pets', status: '201' },
    ];
    // Below, at and past each bound, past the last (only +Inf), zero and a negative value.
    const values = [0, -1, 0.0005, 0.001, 0.0010001, 0.01, 0.05, 0.1, 0.5, 1, 1.5, 100];
    const handles = labelSets.map((labels) => histogramSeries(handled.histogram, labels));
    const counts = [
      counterSeries(handled.counter, { name: 'a', type: 'query' }),
      counterSeries(handled.counter, { name: 'b', type: 'mutation' }),
    ];
    for (const value of values) {
      labelSets.forEach((labels, i) => {
        plain.histogram.observe(labels, value);
        handles[i]?.(value);
      });
      plain.counter.inc({ name: 'a', type: 'query' });
      counts[0]?.();
    }
    plain.counter.inc({ name: 'b', type: 'mutation' });
    counts[1]?.();
    expect(await handled.registry.metrics()).toBe(await plain.registry.metrics());
    expect(await handled.registry.metrics()).toContain(
      'h_seconds_bucket{le="+Inf",route="GET /pets",status="200"} 12',
    );
  });

  it('keep counting after a reset, and refuse what prom-client refuses', async () => {
    const { plain, handled } = twins();
    const handle = histogramSeries(handled.histogram, { route: 'r', status: 's' });
    handle(0.5);
    handled.histogram.reset();
    plain.histogram.reset();
    handle(0.05);
    plain.histogram.observe({ route: 'r', status: 's' }, 0.05);
    expect(await handled.registry.metrics()).toBe(await plain.registry.metrics());
    expect(() => handle(Number.NaN)).toThrow(TypeError);
    expect(() => histogramSeries(handled.histogram, { nope: 'x' } as never)).toThrow(/not included/);
  });

  it('are made once per key, and the cache starts again past its bound', () => {
    const cache = new SeriesCache<{ made: number }>(2);
    let made = 0;
    const lookup = (key: string) => cache.get(key) ?? cache.add({ made: ++made }, key);
    const first = lookup('a');
    expect(lookup('a')).toBe(first);
    lookup('b');
    lookup('c');
    expect(lookup('a')).not.toBe(first);
    expect(made).toBe(4);
  });

  it('tell keys apart by every part, a number from its text included', () => {
    const cache = new SeriesCache<string>();
    cache.add('GET 200', 'GET', 200);
    cache.add('GET "200"', 'GET', '200');
    cache.add('query a', 'query', 'a', 'x');
    expect(cache.get('GET', 200)).toBe('GET 200');
    expect(cache.get('GET', '200')).toBe('GET "200"');
    expect(cache.get('GET', 404)).toBeUndefined();
    expect(cache.get('query', 'a', 'x')).toBe('query a');
    expect(cache.get('query', 'a')).toBeUndefined();
    expect(cache.get('query')).toBeUndefined();
  });
});
