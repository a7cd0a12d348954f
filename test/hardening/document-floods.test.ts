// @tier ci: floods npm start for half a minute and measures the process's memory

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILED_CACHE } from '../../src/execution/compiled.ts';
import { PLANNED_SHAPES, PREPARED_CACHE, SEEN_SHAPES } from '../../src/policy/prepared-operations.ts';
import { VALID_SHAPES } from '../../src/yoga/validation/by-shape.ts';
import { DOCUMENT_CACHE } from '../../src/yoga/validation/document-cache.ts';
import {
  type FloodKind,
  flood,
  INSPECTOR_OPTIONS,
  type Inspector,
  inspectorOf,
  rssMb,
} from '../support/document-floods.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';

// `npm start` under floods of documents it has never seen: every request a new text, so every cache
// keyed by a document's text (or shape) gets a new entry from each. What the process keeps must be
// what those caches may hold by their own bounds, and no request may outlive its answer in them.

/** Seconds of each flood: each sends hundreds to thousands of new documents, past the caches' bounds. */
const SECONDS = 7;
const CONNECTIONS = 4;
const KEY = 'document-floods';
const KINDS = ['valid', 'invalid', 'variables'] as const;
/** The bound docs/limits.md states for the gateway's RSS under load. */
const RSS_BOUND_MB = 400;
/**
 * What the caches keyed by documents (their text or shape) may hold together, by their own bounds
 * in bytes: parse and validation, compiled forms, prepared operations, plans and shapes.
 */
const CACHES_MB =
  [DOCUMENT_CACHE, COMPILED_CACHE, PREPARED_CACHE, PLANNED_SHAPES, SEEN_SHAPES, VALID_SHAPES].reduce(
    (sum, { bytes }) => sum + bytes,
    0,
  ) /
  1024 /
  1024;
/**
 * What survives a full collection beside the caches, which a flood may have grown: compiled code
 * of the paths it took, metric series, connection pools.
 */
const HEAP_SLACK_MB = 16;
/** The young generation: three 16 MB semi-spaces under `npm start`'s --max-semi-space-size=16. */
const YOUNG_MB = 3 * 16;
/**
 * V8 collects the old generation once it has grown to at most 4 times what survived the last full
 * collection (its largest heap growing factor): a flood's garbage may take the difference.
 */
const GROWING_FACTOR = 4;

let upstream: FakeUpstream;
let gateway: StartedGateway;
let inspector: Inspector;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.tokens.add(KEY);
  gateway = await npmStart({
    UPSTREAM_URL: upstream.url,
    LOG_LEVEL: 'error',
    NODE_OPTIONS: INSPECTOR_OPTIONS,
  });
  inspector = await inspectorOf(gateway.waitFor);
});

afterAll(async () => {
  inspector?.close();
  await gateway?.stop();
  await upstream?.close();
});

/** RSS and heap once a full collection has run: what the process keeps, not what it has yet to free. */
async function kept(): Promise<{ rss: number; heap: number }> {
  await inspector.collectGarbage();
  return { rss: rssMb(gateway.pid), heap: (await inspector.heapUsage()).used };
}

describe('floods of new documents', { timeout: 120_000 }, () => {
  it('keep RSS within the caches’ bounds while they last, and leave only the caches behind', async () => {
    const start = await kept();
    const peak: Partial<Record<FloodKind, number>> = {};
    const sent: Partial<Record<FloodKind, number>> = {};
    const after: Partial<Record<FloodKind, { rss: number; heap: number }>> = {};
    for (const kind of KINDS) {
      peak[kind] = rssMb(gateway.pid);
      const sampler = setInterval(() => {
        peak[kind] = Math.max(peak[kind] ?? 0, rssMb(gateway.pid));
        // The fake's request log would only grow this process.
        upstream.requests.length = 0;
      }, 50);
      try {
        sent[kind] = await flood(gateway.origin, kind, {
          seconds: SECONDS,
          connections: CONNECTIONS,
          key: KEY,
        });
      } finally {
        clearInterval(sampler);
      }
      after[kind] = await kept();
    }
    const report = JSON.stringify({ start, peak, sent, after, CACHES_MB });
    console.log(`document floods: ${report}`);

    // What survives may fill the caches to their bounds; the old generation may grow to
    // GROWING_FACTOR times that before V8 collects it, and the young generation holds the rest.
    const survivors = start.heap + CACHES_MB + HEAP_SLACK_MB;
    const transient = YOUNG_MB + (GROWING_FACTOR - 1) * survivors;
    for (const kind of KINDS) {
      const { heap, rss } = after[kind] as { rss: number; heap: number };
      expect(peak[kind], `${kind}: ${report}`).toBeLessThan(RSS_BOUND_MB);
      expect((peak[kind] ?? 0) - start.rss, `${kind}: ${report}`).toBeLessThan(CACHES_MB + transient);
      // What survives a full collection is what the caches keep: within their bounds.
      expect(heap - start.heap, `${kind}: ${report}`).toBeLessThan(CACHES_MB + HEAP_SLACK_MB);
      // And the process gives back the rest but for pages the allocators keep for reuse.
      expect(rss - start.rss, `${kind}: ${report}`).toBeLessThan(CACHES_MB + HEAP_SLACK_MB + YOUNG_MB);
    }
  });
});
