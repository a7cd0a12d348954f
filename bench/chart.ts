/**
 * One workload's targets side by side on req/s, CPU per request and peak RSS, as a self-contained
 * SVG (no script, no font files), so the docs can show it beside the table it was drawn from.
 */

/** What the chart reads of one target's results: a `Summary` of report.ts fits as it is. */
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
  /** A line under the chart saying where the figures come from. */
  caption?: string;
}

/** Each column's title and value, rounded as the table rounds it, so both show the same numbers. */
const METRICS: ReadonlyArray<[string, (row: ChartRow) => number]> = [
  ['req/s (more is better)', (r) => Number(r.rps.toFixed(0))],
  ['CPU µs per request (less is better)', (r) => Number(r.cpuMicrosPerRequest.toFixed(0))],
  ['peak RSS MB (less is better)', (r) => Number((r.peakRssBytes / 1024 / 1024).toFixed(0))],
];

const [LABEL_WIDTH, COLUMN_WIDTH, BAR_WIDTH, ROW_HEIGHT, TOP, PADDING] = [130, 260, 180, 24, 52, 16];

/**
 * For `options.workload` on `options.upstream`: one row per target, one column per metric, each bar
 * scaled to the largest value of its column. The same rows give the same bytes.
 */
export function headlineChart(rows: readonly ChartRow[], options: ChartOptions = {}): string {
  const { workload = 'list20', upstream = 'static', caption } = options;
  const mine = rows.filter((row) => row.workload === workload && row.upstream === upstream);
  const targets = options.targets ?? [...new Set(mine.map((row) => row.target))];
  const drawn = targets.flatMap((target) => mine.filter((row) => row.target === target).slice(0, 1));
  if (drawn.length === 0) throw new Error(`no results for ${workload} on the ${upstream} upstream`);

  const width = PADDING * 2 + LABEL_WIDTH + COLUMN_WIDTH * METRICS.length;
  const height = TOP + drawn.length * ROW_HEIGHT + (caption ? 34 : 14);
  const title = `${workload} on the ${upstream} upstream: ${drawn.map((row) => row.target).join(', ')}`;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title">`,
    `<title id="chart-title">${xmlText(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<g font-family="-apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12" fill="#1f2328">`,
    `<text x="${PADDING}" y="22" font-size="14" font-weight="600">${xmlText(`${workload} · ${upstream} upstream`)}</text>`,
  ];
  METRICS.forEach(([metric, measure], column) => {
    const x = PADDING + LABEL_WIDTH + column * COLUMN_WIDTH;
    const values = drawn.map(measure);
    const largest = Math.max(...values.filter(Number.isFinite), 0);
    parts.push(`<text x="${x}" y="${TOP - 10}" font-weight="600">${xmlText(metric)}</text>`);
    drawn.forEach((row, index) => {
      const y = TOP + index * ROW_HEIGHT;
      const value = values[index] as number;
      const finite = Number.isFinite(value);
      const length = finite && largest > 0 ? Math.max((BAR_WIDTH * value) / largest, 1) : 0;
      parts.push(
        `<rect x="${x}" y="${y + 4}" width="${length.toFixed(1)}" height="${ROW_HEIGHT - 8}" rx="2" fill="${colour(row.target)}"><title>${xmlText(`${row.target}: ${finite ? grouped(value) : 'no value'}`)}</title></rect>`,
        `<text x="${(x + length + 6).toFixed(1)}" y="${y + ROW_HEIGHT / 2 + 4}">${finite ? grouped(value) : '–'}</text>`,
      );
    });
  });
  drawn.forEach((row, index) => {
    const y = TOP + index * ROW_HEIGHT + ROW_HEIGHT / 2 + 4;
    const weight = row.target === 'gateway' ? ' font-weight="600"' : '';
    parts.push(`<text x="${PADDING}" y="${y}"${weight}>${xmlText(row.target)}</text>`);
  });
  if (caption) {
    parts.push(
      `<text x="${PADDING}" y="${height - 12}" font-size="11" fill="#59636e">${xmlText(caption)}</text>`,
    );
  }
  parts.push('</g>', '</svg>');
  return `${parts.join('\n')}\n`;
}

/** The gateway stands out, its twins lighter; peers in blue; the hops without GraphQL in grey, direct REST lightest. */
function colour(target: string): string {
  if (target === 'gateway') return '#e10098';
  if (target.startsWith('gateway')) return '#f08ccb';
  if (target === 'direct') return '#8c959f';
  return target === 'bare-proxy' || target === 'json-hop' ? '#57606a' : '#0969da';
}

/** 12345 → "12,345", whatever the machine's locale. */
function grouped(value: number): string {
  const [whole = '', fraction] = String(Math.abs(value)).split('.');
  const digits = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${value < 0 ? '-' : ''}${digits}${fraction ? `.${fraction}` : ''}`;
}

const xmlText = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
