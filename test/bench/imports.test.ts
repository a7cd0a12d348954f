// @tier unit

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const bench = new URL('../../bench/', import.meta.url);

/** bench/'s own modules each file imports, statically or lazily. */
const imports = new Map(
  readdirSync(bench)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => {
      const text = readFileSync(new URL(file, bench), 'utf8');
      return [
        file,
        [...text.matchAll(/(?:from|import\(?)\s*'\.\/([\w.-]+\.ts)'/g)].map((m) => m[1] as string),
      ];
    }),
);

/** A path of imports from `file` back to itself, if there is one. */
function cycleFrom(file: string, path: string[] = []): string[] | undefined {
  if (path.includes(file)) return path[0] === file ? [...path, file] : undefined;
  for (const next of imports.get(file) ?? []) {
    const cycle = cycleFrom(next, [...path, file]);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('bench/ imports', () => {
  it('form no cycle', () => {
    expect(imports.size).toBeGreaterThan(10);
    for (const file of imports.keys()) expect(cycleFrom(file)?.join(' → '), file).toBeUndefined();
  });
});
