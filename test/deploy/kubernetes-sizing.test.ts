// @tier slow: kubectl renders the base and every overlay

import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { KubeObject } from '../support/kustomize.ts';
import { DOCS, find, gateway, RENDERED, read, secretValues } from './rendered.ts';

// The figures each rendering sets, recomputed from where they come from: the drain in src/main.ts
// for the grace period, the bench table in docs/performance-run.md for memory, CPU and the HPA target,
// and the same arithmetic shown in docs/kubernetes.md.

/** Mebibytes of a Kubernetes memory quantity (Mi, Gi or M). */
function mebibytes(quantity: string): number {
  const [, amount, unit] = /^(\d+)(Mi|Gi|M)$/.exec(quantity) ?? [];
  if (!amount) throw new Error(`unexpected memory quantity ${quantity}`);
  return unit === 'Gi'
    ? Number(amount) * 1024
    : unit === 'M'
      ? (Number(amount) * 1e6) / 2 ** 20
      : Number(amount);
}

/** Cores of a Kubernetes CPU quantity ("1", "500m"). */
function cores(quantity: string): number {
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) / 1000 : Number(quantity);
}

/** The gateway's rows of docs/performance-run.md's bench table. */
function benchRows(): { workload: string; cpuMicros: number; peakRssMiB: number }[] {
  const page = read('docs/performance-run.md');
  const header = page
    .split('\n')
    .find((line) => line.startsWith('| workload | upstream | target |'))
    ?.split('|')
    .map((cell) => cell.trim());
  if (!header) throw new Error('docs/performance-run.md has no bench table');
  const column = (name: string) => header.indexOf(name);
  return page
    .split('\n')
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .filter((cells) => cells[column('target')] === 'gateway')
    .map((cells) => ({
      workload: cells[column('workload')] as string,
      cpuMicros: Number(cells[column('CPU µs/req')]),
      peakRssMiB: Number(cells[column('peak RSS MB')]),
    }));
}

/** A constant of src/main.ts, as written there (main.ts runs the gateway when imported). */
function mainConstant(pattern: RegExp): number {
  const match = pattern.exec(read('src/main.ts'));
  if (!match) throw new Error(`src/main.ts: ${pattern} not found`);
  return Number((match[1] as string).replace(/_/g, ''));
}

describe.each(RENDERED)('deploy/kubernetes/%s', (_name, objects) => {
  it('gives SIGTERM the time the drain takes: grace ≥ preStop + DRAIN_TIMEOUT_MS + the log flush', () => {
    const { pod, container } = gateway(objects);
    const drainMs = mainConstant(/const DRAIN_TIMEOUT_MS = ([\d_]+);/);
    const flushMs = mainConstant(/flushWithin\(([\d_]+)\)/);
    const preStop = container.lifecycle?.preStop?.sleep?.seconds ?? 0;
    // Long enough for endpoints to be removed before the gateway stops taking connections.
    expect(preStop).toBeGreaterThanOrEqual(5);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + (drainMs + flushMs) / 1000);
  });

  it('sizes from the bench: memory over the worst peak RSS, one core, the HPA target in the docs', () => {
    const { container, settings } = gateway(objects);
    const rows = benchRows();
    const worstRss = Math.max(...rows.map((row) => row.peakRssMiB));
    const steady = rows.find((row) => row.workload === 'list20-steady');
    expect(worstRss).toBeGreaterThan(0);
    expect(steady?.cpuMicros).toBeGreaterThan(0);
    const { requests = {}, limits = {} } = container.resources;
    // Tracing loads the OpenTelemetry SDK: ~40 MB more (src/main.ts).
    const tracingMiB = settings.OTEL_EXPORTER_OTLP_ENDPOINT ? 40 : 0;
    // Client connections past the bench's 50, at the cap the settings give under a container's
    // usual `ulimit -n`: ~14 KB each when idle (2,000 kept-alive connections raised RSS by 27.5 MB,
    // measured 2026-11-25, docs/kubernetes.md).
    const { maxConnections } = loadConfig(
      { ...settings, ...secretValues(objects, gateway(objects).secretRefs) },
      { fileDescriptors: 1_048_576 },
    );
    const connectionsMiB = (maxConnections * 14) / 1024;
    expect(mebibytes(limits.memory as string)).toBeGreaterThanOrEqual(worstRss + tracingMiB + connectionsMiB);
    expect(requests.memory).toBe(limits.memory);
    // No CPU limit: CFS throttling only adds latency to a process that uses one core at most.
    expect(limits.cpu).toBeUndefined();
    const hpa = find<
      KubeObject & {
        spec: { metrics: { resource: { name: string; target: { averageUtilization: number } } }[] };
      }
    >(objects, 'HorizontalPodAutoscaler');
    const [metric] = hpa.spec.metrics;
    expect(metric?.resource.name).toBe('cpu');
    const target = metric?.resource.target.averageUtilization as number;
    expect(target).toBeLessThan(100);
    // The docs show the same arithmetic on the same figures.
    const perPod = Math.round(
      (cores(requests.cpu as string) * (target / 100) * 1e6) / (steady?.cpuMicros ?? 1),
    );
    expect(DOCS).toContain(`${steady?.cpuMicros} µs`);
    expect(DOCS).toContain(`${worstRss} MiB`);
    expect(DOCS).toContain(perPod.toLocaleString('en-US'));
  });
});
