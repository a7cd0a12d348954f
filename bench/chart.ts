/**
 * The bench's headline as a picture: one workload's targets side by side on req/s, CPU per request
 * and peak RSS, as a self-contained SVG (no script, no font files, no dependency), so the README
 * and docs/performance.md can show it beside the table it was drawn from.
 */

/** What the chart reads of one target's results: a `Summary` of bench/report.ts fits as it is. */
export interface ChartRow {
  workload: string;
  upstream: string;
  target: string;
  rps: number;
  cpuMicrosPerRequest: number;
  peakRssBytes: number;
}

export interface ChartOptions {
  /** @default 'list20' */
  workload?: string;
  /** @default 'static' */
  upstream?: string;
  /** Targets in the order drawn; others are left out. @default every target of the workload, in input order */
  targets?: readonly string[];
  /** A line under the chart saying where the figures come from (the run, the machine). */
  caption?: string;
}

interface Metric {
  title: string;
  /** Rounded as bench/report.ts's table rounds it, so the chart and the table show the same numbers. */
  value: (row: ChartRow) => number;
  format: (value: number) => string;
}

const METRICS: readonly Metric[] = [
  { title: 'req/s (more is better)', value: (r) => Number(r.rps.toFixed(0)), format: grouped },
  {
    title: 'CPU µs per request (less is better)',
    value: (r) => Number(r.cpuMicrosPerRequest.toFixed(0)),
    format: grouped,
  },
  {
    title: 'peak RSS MB (less is better)',
    value: (r) => Number((r.peakRssBytes / 1024 / 1024).toFixed(0)),
    format: grouped,
  },
];

const LABEL_WIDTH = 130;
const COLUMN_WIDTH = 260;
const BAR_WIDTH = 180;
const ROW_HEIGHT = 24;
const TOP = 52;
const PADDING = 16;

/**
 * The headline of a bench run as an SVG document: for `options.workload` on `options.upstream`, one
 * row per target, one column per metric, each bar scaled to the largest value of its column.
 * Deterministic: the same rows give the same bytes.
 */
export function headlineChart(rows: readonly ChartRow[], options: ChartOptions = {}): string {
  const workload = options.workload ?? 'list20';
  const upstream = options.upstream ?? 'static';
  const mine = rows.filter((row) => row.workload === workload && row.upstream === upstream);
  const targets = options.targets ?? [...new Set(mine.map((row) => row.target))];
  const drawn = targets.flatMap((target) => mine.filter((row) => row.target === target).slice(0, 1));
  if (drawn.length === 0) throw new Error(`no results for ${workload} on the ${upstream} upstream`);

  const width = PADDING * 2 + LABEL_WIDTH + COLUMN_WIDTH * METRICS.length;
  const height = TOP + drawn.length * ROW_HEIGHT + (options.caption ? 34 : 14);
  const title = `${workload} on the ${upstream} upstream: ${drawn.map((row) => row.target).join(', ')}`;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title">`,
    `<title id="chart-title">${xmlText(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<g font-family="-apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12" fill="#1f2328">`,
    `<text x="${PADDING}" y="22" font-size="14" font-weight="600">${xmlText(`${workload} · ${upstream} upstream`)}</text>`,
  ];
  METRICS.forEach((metric, column) => {
    const x = PADDING + LABEL_WIDTH + column * COLUMN_WIDTH;
    const values = drawn.map(metric.value);
    const largest = Math.max(...values.filter(Number.isFinite), 0);
    parts.push(`<text x="${x}" y="${TOP - 10}" font-weight="600">${xmlText(metric.title)}</text>`);
    drawn.forEach((row, index) => {
      const y = TOP + index * ROW_HEIGHT;
      const value = values[index] as number;
      const length = Number.isFinite(value) && largest > 0 ? Math.max((BAR_WIDTH * value) / largest, 1) : 0;
      parts.push(
        `<rect x="${x}" y="${y + 4}" width="${length.toFixed(1)}" height="${ROW_HEIGHT - 8}" rx="2" fill="${colour(row.target)}"><title>${xmlText(`${row.target}: ${Number.isFinite(value) ? metric.format(value) : 'no value'}`)}</title></rect>`,
        `<text x="${(x + length + 6).toFixed(1)}" y="${y + ROW_HEIGHT / 2 + 4}">${Number.isFinite(value) ? metric.format(value) : '–'}</text>`,
      );
    });
  });
  drawn.forEach((row, index) => {
    const y = TOP + index * ROW_HEIGHT + ROW_HEIGHT / 2 + 4;
    const weight = row.target === 'gateway' ? ' font-weight="600"' : '';
    parts.push(`<text x="${PADDING}" y="${y}"${weight}>${xmlText(row.target)}</text>`);
  });
  if (options.caption) {
    parts.push(
      `<text x="${PADDING}" y="${height - 12}" font-size="11" fill="#59636e">${xmlText(options.caption)}</text>`,
    );
  }
  parts.push('</g>', '</svg>');
  return `${parts.join('\n')}\n`;
}

/**
 * The gateway stands out, its Yoga-only run in a lighter shade; peers (other GraphQL servers, such as
 * tailcall) in blue; the hops without GraphQL in grey, direct REST the lightest.
 */
function colour(target: string): string {
  if (target === 'gateway') return '#e10098';
  if (target.startsWith('gateway')) return '#f08ccb';
  if (target === 'direct') return '#8c959f';
  if (target === 'bare-proxy' || target === 'json-hop') return '#57606a';
  return '#0969da';
}

/** 12345 → "12,345", whatever the machine's locale. */
function grouped(value: number): string {
  const [whole = '', fraction] = String(Math.abs(value)).split('.');
  const digits = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${value < 0 ? '-' : ''}${digits}${fraction ? `.${fraction}` : ''}`;
}

function xmlText(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
