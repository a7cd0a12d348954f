/*
 * A list answer as CSV (RFC 4180) for spreadsheets and pandas: a header row, one row per item,
 * nested objects flattened (`category.name`), ids as the exact decimal strings the JSON carries.
 */

type Row = Record<string, unknown>;

/** The list a CSV can hold: the answer's one root field, when it is a list of objects. */
export function listOf(data: unknown): Row[] | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const values = Object.values(data);
  if (values.length !== 1 || !Array.isArray(values[0])) return undefined;
  const list = values[0] as unknown[];
  return list.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))
    ? (list as Row[])
    : undefined;
}

/** `{ a: 1, b: { c: 2 } }` → `a`, `b.c`: each leaf under its path. */
function flatten(row: Row, prefix = '', into: Map<string, unknown> = new Map()): Map<string, unknown> {
  for (const [key, value] of Object.entries(row)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      flatten(value as Row, path, into);
    else into.set(path, value);
  }
  return into;
}

/**
 * One cell. Text a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a return
 * first) is led by `'`, as OWASP advises against CSV injection: a pet's name is data, not code.
 */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text =
    typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The rows as CSV, with a header row of every column any row has, in the order first met. */
export function toCsv(rows: readonly Row[]): string {
  const flat = rows.map((row) => flatten(row));
  const columns = [...new Set(flat.flatMap((row) => [...row.keys()]))];
  const lines = [columns.map(cell).join(',')];
  for (const row of flat) lines.push(columns.map((column) => cell(row.get(column))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
