// @tier unit

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ChartRow, headlineChart } from '../../bench/chart.ts';
import type { Summary } from '../../bench/report.ts';

const MB = 1024 * 1024;
const row = (target: string, rps: number, cpu: number, rssMb: number, workload = 'list20'): ChartRow => ({
  workload,
  upstream: 'static',
  target,
  rps,
  cpuMicrosPerRequest: cpu,
  peakRssBytes: rssMb * MB,
});
const RUN = [
  row('gateway', 3876.4, 276.2, 389.3),
  row('gateway-yoga', 2138, 539, 414),
  row('bare-proxy', 10585, 92, 244),
  row('json-hop', 8225, 122, 221),
  row('direct', 27256, 36, 106),
  row('gateway', 2703, 394, 409, 'list100'),
];

/** Bar widths of the chart, column after column, in drawing order. */
const bars = (svg: string) =>
  [...svg.matchAll(/<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"/g)].map((m) => Number(m[1]));

describe('headlineChart', () => {
  it('draws one row per target of the workload, bars scaled to the largest of each column', () => {
    const svg = headlineChart(RUN);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.endsWith('</svg>\n')).toBe(true);
    const widths = bars(svg);
    expect(widths).toHaveLength(15);
    // req/s: direct is the largest; CPU: gateway-yoga; RSS: gateway-yoga.
    expect(widths.slice(0, 5)).toEqual([25.6, 14.1, 69.9, 54.3, 180]);
    expect(widths.slice(5, 10)).toEqual([92.2, 180, 30.7, 40.7, 12]);
    expect(widths.slice(10)).toEqual([169.1, 180, 106.1, 96.1, 46.1]);
    expect(svg).not.toMatch(/NaN|undefined/);
    // list100's gateway is another workload: not drawn.
    expect(svg).not.toContain('2,703');
  });

  it('shows the numbers as the bench table rounds them, so the chart reads like the table beside it', () => {
    const svg = headlineChart(RUN);
    for (const shown of ['3,876', '276', '389', '10,585', '27,256', '106'])
      expect(svg).toContain(`>${shown}</text>`);
    // Drawn from the exact figures or from the table's rounded ones: the same picture.
    const rounded = RUN.map((r) => ({
      ...r,
      rps: Math.round(r.rps),
      cpuMicrosPerRequest: Math.round(r.cpuMicrosPerRequest),
      peakRssBytes: Math.round(r.peakRssBytes / MB) * MB,
    }));
    expect(headlineChart(rounded)).toBe(svg);
  });

  it('draws the targets asked for, in that order, another workload, and a caption', () => {
    const svg = headlineChart(RUN, {
      workload: 'list20',
      targets: ['bare-proxy', 'gateway', 'tailcall'],
      caption: 'npm run bench, 2026-11-23T01:21Z',
    });
    const labels = [...svg.matchAll(/<text x="16" y="[\d.]+"(?: font-weight="600")?>([^<]+)<\/text>/g)].map(
      (m) => m[1],
    );
    expect(labels).toEqual(['bare-proxy', 'gateway']);
    expect(svg).toContain('>npm run bench, 2026-11-23T01:21Z</text>');
    expect(headlineChart(RUN, { workload: 'list100' })).toContain('>2,703</text>');
    expect(() => headlineChart(RUN, { workload: 'cold' })).toThrow(/no results for cold/);
  });

  it('tells the gateway, its peers and the plain hops apart by colour', () => {
    const svg = headlineChart([...RUN, row('tailcall', 9000, 100, 50)]);
    const fill = (target: string) => new RegExp(`fill="(#[0-9a-f]{6})"><title>${target}: `).exec(svg)?.[1];
    expect(
      new Set([fill('gateway'), fill('gateway-yoga'), fill('tailcall'), fill('bare-proxy'), fill('direct')])
        .size,
    ).toBe(5);
    expect(fill('json-hop')).toBe(fill('bare-proxy'));
  });

  it('escapes what it writes as text, and marks a value it does not have', () => {
    const svg = headlineChart([row('<script>&"', Number.NaN, 1, 1)]);
    expect(svg).toContain('&#60;script&#62;&#38;&#34;');
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('>–</text>');
  });

  it('takes the bench’s own Summary as it is', () => {
    const summary: Summary = {
      workload: 'list20',
      upstream: 'static',
      target: 'gateway',
      generator: 'wrk',
      rps: 1000,
      p50Ms: 1,
      p99Ms: 2,
      errors: 0,
      non2xx: 0,
      graphqlErrors: 0,
      cpuMicrosPerRequest: 300,
      upstreamCpuMicrosPerRequest: 40,
      generatorCpuMicrosPerRequest: 30,
      othersCpuShare: 0,
      peakRssBytes: 400 * MB,
      upstreamCallsPerOp: 1,
    } as Summary;
    expect(headlineChart([summary])).toContain('>1,000</text>');
  });
});

describe('docs/performance.md', () => {
  it('shows the chart of the full run its figures come from (docs/performance-run.md)', () => {
    const page = readFileSync(new URL('../../docs/performance.md', import.meta.url), 'utf8');
    const run = readFileSync(new URL('../../docs/performance-run.md', import.meta.url), 'utf8');
    const image = /!\[[^\]]*\]\(([\w.-]+\.svg)\)/.exec(page)?.[1];
    expect(image).toBeDefined();
    const svg = readFileSync(new URL(`../../docs/${image}`, import.meta.url), 'utf8');
    const lines = run.split('\n');
    const start = lines.findIndex((line) => /^\| workload \| upstream \| target \| req\/s \|/.test(line));
    expect(start).toBeGreaterThan(-1);
    const cells = (line: string) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
    const header = cells(lines[start] as string);
    const column = (name: string) => header.indexOf(name);
    const rows: ChartRow[] = [];
    for (const line of lines.slice(start + 2)) {
      if (!line.startsWith('|')) break;
      const c = cells(line);
      rows.push({
        workload: c[column('workload')] as string,
        upstream: c[column('upstream')] as string,
        target: c[column('target')] as string,
        rps: Number(c[column('req/s')]),
        cpuMicrosPerRequest: Number(c[column('CPU µs/req')]),
        peakRssBytes: Number(c[column('peak RSS MB')]) * MB,
      });
    }
    const caption = /<text x="16" y="[\d.]+" font-size="11" fill="#59636e">([^<]*)<\/text>/.exec(svg)?.[1];
    expect(svg).toBe(
      headlineChart(
        rows,
        caption ? { caption: caption.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))) } : {},
      ),
    );
  });
});
