// @tier unit

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CODES, type Code } from '../../src/codes.ts';

// The gateway's error codes are written once, in src/codes.ts. docs/api.md's "Error codes" table is
// what clients read: the two are held against each other both ways, so a code added, dropped or
// given another status on one side fails here until the other says the same.

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

interface DocumentedRow {
  /** The gateway codes the row's first cell names; none for the upstream's codes passed on. */
  codes: string[];
  first: string;
  extensions: string;
  /** The HTTP cell's status; undefined for `—` (no HTTP answer carries the code). */
  status: number | undefined;
}

function documentedRows(): DocumentedRow[] {
  const page = read('docs/api.md');
  const start = page.indexOf('## Error codes');
  if (start === -1) throw new Error('docs/api.md has no "## Error codes" section');
  const end = page.indexOf('\n## ', start + 1);
  const lines = page
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('|'));
  // The header and the separator first.
  return lines.slice(2).map((line) => {
    const [first = '', , extensions = '', http = ''] = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    const status = /^(\d{3})\b/.exec(http)?.[1];
    return {
      codes: [...first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1] as string),
      first,
      extensions,
      status: status === undefined ? undefined : Number(status),
    };
  });
}

const rows = documentedRows();
const table: ReadonlyArray<Code> = Object.values(CODES);

/** The statuses the docs should give a code: its own, and 200 where a field raises it too. */
function expectedStatuses(code: Code): Array<number | undefined> {
  return code.field ? [code.status, 200] : [code.status];
}

describe('docs/api.md: error codes, against src/codes.ts', () => {
  it('reads a table of rows (the checks below have rows to check)', () => {
    expect(rows.length).toBeGreaterThan(30);
    expect(table.length).toBeGreaterThan(30);
  });

  it.each(table.map((code) => [code.code, code] as const))('documents %s with its status', (_name, code) => {
    const documented = rows.filter((row) => row.codes.includes(code.code)).map((row) => row.status);
    expect(documented.length, `${code.code} has a row`).toBeGreaterThan(0);
    expect(new Set(documented), code.code).toEqual(new Set(expectedStatuses(code)));
  });

  it('documents no gateway code the table lacks', () => {
    const known = new Set(table.map((code) => code.code));
    const unknown = rows.flatMap((row) => row.codes).filter((name) => !known.has(name));
    expect(unknown).toEqual([]);
  });

  it('documents the extensions the table fixes', () => {
    const missing = table.flatMap((code) =>
      Object.entries(code.extensions ?? {})
        .map(([key, value]) => `\`${key}: ${value}\``)
        .filter(
          (shown) => !rows.some((row) => row.codes.includes(code.code) && row.extensions.includes(shown)),
        )
        .map((shown) => `${code.code}: ${shown}`),
    );
    expect(missing).toEqual([]);
  });

  it("leaves only the upstream's codes, passed on verbatim, out of the table", () => {
    const others = rows.filter((row) => row.codes.length === 0);
    expect(others.map((row) => row.first)).toEqual(['*the REST `code`, verbatim*']);
  });
});

describe('src/: each gateway code written once', () => {
  // The reference service and the contract hold the REST codes, some of which share a name with the
  // gateway's (BAD_REQUEST, NOT_FOUND, UNAUTHENTICATED): theirs, not the gateway's.
  const outside = /^(codes\.ts$|petstore\/|contract\/)/;
  const sources = readdirSync(new URL('src/', ROOT), { recursive: true, encoding: 'utf8' })
    .map((name) => name.split('\\').join('/'))
    .filter((name) => name.endsWith('.ts') && !outside.test(name));
  const literal = new RegExp(`['"](${table.map((code) => code.code).join('|')})['"]`, 'g');

  it('quotes no code outside src/codes.ts: every other place reads it from CODES', () => {
    expect(sources.length).toBeGreaterThan(50);
    const quoted = sources.flatMap((name) =>
      [...read(`src/${name}`).matchAll(literal)].map((match) => `src/${name}: ${match[0]}`),
    );
    expect(quoted).toEqual([]);
  });
});
