// @tier unit

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sentence } from './claims.ts';

// Sentences that name what a file of the repository says (#44 item 7): held against the file, so the
// two cannot drift apart again.

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

describe('docs/mobile.md: “Write the app’s operations with codegen’s client preset…”', () => {
  it('names the persistedDocuments option as codegen.ts sets it', () => {
    const claim = sentence('docs/mobile.md', "Write the app's operations with codegen's client preset");
    const option = /persistedDocuments: \{[^}]*\}/.exec(read('codegen.ts'))?.[0];
    expect(option).toBeDefined();
    expect(claim).toContain(`\`${option}\``);
    expect(read('docs/mobile.md')).not.toContain('persistedDocuments: true');
  });
});

describe('examples/web/README.md: “`VITE_GATEWAY_URL` says where the gateway is…”', () => {
  const claim = sentence('examples/web/README.md', '`VITE_GATEWAY_URL` says where the gateway is');
  const app = read('examples/web/src/app.tsx');

  it('says it holds for npm run dev as for the build (Vite reads import.meta.env in both)', () => {
    expect(app).toMatch(/import\.meta\.env\.VITE_GATEWAY_URL/);
    expect(claim).toContain('`npm run dev`');
    expect(claim).toContain('`vite build`');
    expect(claim).not.toMatch(/at build time/);
  });

  it('gives the default the app has, and how to point it at another PORT', () => {
    const fallback = /VITE_GATEWAY_URL \?\? '([^']+)'/.exec(app)?.[1];
    expect(claim).toContain(`\`${fallback}\``);
    expect(claim).toMatch(/`PORT=\d+ npm start`/);
    const port = /`PORT=(\d+) npm start`/.exec(claim)?.[1];
    expect(claim).toContain(`VITE_GATEWAY_URL=http://localhost:${port}/graphql`);
  });
});

/** The rows of the Markdown table whose header line starts with `header`, as cells, by column name. */
function tableRows(page: string, header: string): Array<Record<string, string>> {
  const lines = page.split('\n');
  const start = lines.findIndex((line) => line.startsWith(header));
  if (start === -1) throw new Error(`no table starting "${header}"`);
  const cells = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
  const names = cells(lines[start] as string);
  const rows: Array<Record<string, string>> = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const row = cells(line);
    rows.push(Object.fromEntries(names.map((name, i) => [name, row[i] ?? ''])));
  }
  return rows;
}

describe('docs/performance.md: the headline is the run on docs/performance-run.md', () => {
  const page = read('docs/performance.md');
  const run = read('docs/performance-run.md');
  const results = tableRows(run, '| workload | upstream | target | req/s |');
  const ratios = tableRows(run, '| workload | ratio | req/s |');

  it('the headline table holds list20’s rows of the full table', () => {
    const headline = tableRows(page, '| target | what it is |');
    expect(headline.length).toBeGreaterThan(3);
    for (const row of headline) {
      const target = row.target?.replace(/`/g, '');
      const full = results.find(
        (result) => result.workload === 'list20' && result.upstream === 'static' && result.target === target,
      );
      expect(full, `${target}`).toBeDefined();
      expect([row['req/s'], row['CPU µs/req'], row['peak RSS MB']], `${target}`).toEqual([
        full?.['req/s'],
        full?.['CPU µs/req'],
        full?.['peak RSS MB'],
      ]);
    }
  });

  it('every ratio its reading gives (N.NN×) is a median of the ratios table', () => {
    const start = page.indexOf('What it means');
    const reading = page.slice(start, page.indexOf('\n## ', start));
    const cited = [...reading.matchAll(/\b(\d+\.\d\d)×/g)].map((match) => match[1] as string);
    expect(cited.length).toBeGreaterThan(5);
    const medians = new Set(
      ratios.flatMap((row) => [row['req/s'], row['CPU µs/req']].map((cell) => cell?.split(' ')[0])),
    );
    expect(cited.filter((ratio) => !medians.has(ratio))).toEqual([]);
  });
});

describe('docs/architecture.md: “Prepared operations are bounded…”', () => {
  it('names the bounds src/policy/prepared-operations.ts sets', () => {
    const claim = sentence('docs/architecture.md', 'Prepared operations are bounded');
    const source = read('src/policy/prepared-operations.ts');
    const constant = (name: string) => Number(new RegExp(`const ${name} = (\\d+);`).exec(source)?.[1]);
    const entries = Number(/PREPARED_CACHE: LruBounds = \{ entries: (\d+),/.exec(source)?.[1]);
    expect(claim).toContain(`(${entries}, least recently used first`);
    expect(claim).toContain(`documents up to ${constant('MAX_PREPARED_DOCUMENT_LENGTH') / 1024} KB`);
    expect(claim).toContain(`(${constant('MAX_HEADER_SETS')} \`Accept\``);
  });
});

describe('docs/architecture.md: “Adding a mutation”', () => {
  it('names in its steps only files that exist', () => {
    const page = read('docs/architecture.md');
    const start = page.indexOf('## Adding a mutation');
    const walk = page.slice(start, page.indexOf('\n## ', start + 1));
    const steps = walk.slice(walk.indexOf('\n1. '), walk.indexOf('\nThe loaders'));
    const named = [...steps.matchAll(/`([\w.*/-]+\.(?:ts|md|yaml|graphql))`/g)].map(
      (match) => match[1] ?? '',
    );
    expect(named.length).toBeGreaterThan(10);
    // A bare name is in the folder of the file named just before it (`storage.ts` after src/petstore/…).
    const paths = named.map((file, index) =>
      file.includes('/') ? file : `${(named[index - 1] ?? '').replace(/[^/]*$/, '')}${file}`,
    );
    const missing = paths.filter((file) => {
      if (!file.includes('*')) return !existsSync(new URL(file, ROOT));
      const folder = file.replace(/[^/]*$/, '');
      const matcher = new RegExp(`^${file.slice(folder.length).replace('.', '\\.').replace('*', '.+')}$`);
      return !readdirSync(new URL(folder, ROOT)).some((name) => matcher.test(name));
    });
    expect(missing).toEqual([]);
  });
});
