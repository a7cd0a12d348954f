import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The README is read from a fresh clone: what it points to must be in the clone, and what it says
// a program reads must be what the program reads.

const ROOT = new URL('../', import.meta.url);
const README = readFileSync(new URL('README.md', ROOT), 'utf8');

describe('README', () => {
  it('points only to files the repository holds', () => {
    const paths = [
      ...README.matchAll(
        /[`(]((?:\.\.\/|docs\/|schema\/|src\/|test\/|bench\/|deploy\/|\.ci\/)[\w./-]*[\w/])/g,
      ),
    ].map((match) => match[1] as string);
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.filter((path) => path.startsWith('../'))).toEqual([]);
    expect(paths.filter((path) => !existsSync(new URL(path, ROOT)))).toEqual([]);
  });

  it('the reference service table lists exactly the variables src/petstore reads', () => {
    const section = README.slice(
      README.indexOf('<!-- petstore:start -->'),
      README.indexOf('### Endpoints', README.indexOf('<!-- petstore:start -->')),
    );
    const listed = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]);
    const read = new Set<string>();
    for (const file of readdirSync(new URL('src/petstore/', ROOT))) {
      const source = readFileSync(new URL(`src/petstore/${file}`, ROOT), 'utf8');
      for (const match of source.matchAll(/process\.env\.([A-Z_]+)/g)) read.add(match[1] as string);
    }
    expect(new Set(listed)).toEqual(read);
  });
});
