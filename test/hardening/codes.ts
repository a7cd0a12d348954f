import { readFileSync } from 'node:fs';

/**
 * The codes docs/api.md's "Error codes" table documents (the gateway's own, in SCREAMING_SNAKE).
 * Read from the page itself, so a code the gateway starts sending without documenting it fails.
 */
export function documentedCodes(): Set<string> {
  const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const start = page.indexOf('## Error codes');
  if (start === -1) throw new Error('docs/api.md has no "## Error codes" section');
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end < 0 ? undefined : end);
  const codes = new Set<string>();
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    const first = row.split('|')[1] ?? '';
    for (const match of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) codes.add(match[1] as string);
  }
  return codes;
}

/** Every error of a GraphQL-over-HTTP error body, or a description of why it is not one. */
export function errorsOf(text: string): Array<{ message: unknown; extensions?: { code?: unknown } }> {
  const body: unknown = JSON.parse(text);
  if (typeof body !== 'object' || body === null || !('errors' in body) || !Array.isArray(body.errors)) {
    throw new Error(`not a GraphQL error body: ${text.slice(0, 200)}`);
  }
  return body.errors;
}

/** Text that only a leaked stack trace or internal path would contain. */
export const LEAK = /node:internal|\n\s+at |\bat [\w.<>]+ \(|"stack"|\/work\/|file:\/\//;
