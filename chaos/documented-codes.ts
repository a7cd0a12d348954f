import { readFileSync } from 'node:fs';

/**
 * Every `extensions.code` a client may see, as the docs list them: the gateway's error table
 * (docs/api.md) and the reference service's codes (docs/reference-service.md; passed through verbatim).
 * Read from the docs so a code added there is accepted here, and one that is not documented fails
 * the run.
 */
export function documentedCodes(
  gateway = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8'),
  service = readFileSync(new URL('../docs/reference-service.md', import.meta.url), 'utf8'),
): Set<string> {
  const codes = new Set<string>();
  // The gateway's table has its codes in the first column, the service's in the second.
  const tables: Array<[string, number]> = [
    [section(gateway, '## Error codes', '\n## '), 1],
    [section(service, '## Error codes', '\n## '), 2],
  ];
  for (const [table, column] of tables) {
    for (const line of table.split('\n')) {
      const cell = line.startsWith('|') ? line.split('|')[column] : undefined;
      for (const match of cell?.matchAll(/`([A-Z][A-Z0-9_]+)`/g) ?? []) codes.add(match[1] as string);
    }
  }
  return codes;
}

/** From `start` to the next `end`, or to the end of the page when the section is its last. */
function section(text: string, start: string, end: string): string {
  const from = text.indexOf(start);
  if (from === -1) throw new Error(`docs: no section "${start}"`);
  const to = text.indexOf(end, from + start.length);
  return text.slice(from, to === -1 ? undefined : to);
}
