import { readFileSync } from 'node:fs';

/**
 * The codes the README's "Error codes" table documents (the gateway's own, in SCREAMING_SNAKE).
 * Read from the README itself, so a code the gateway starts sending without documenting it fails.
 */
export function documentedCodes(): Set<string> {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('## Error codes');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
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
