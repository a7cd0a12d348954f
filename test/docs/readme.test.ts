// @tier unit

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { headingSlugs, markdownLinks, shownCommands } from '../support/markdown.ts';

// The README and docs/ are read from a fresh clone: what they point to must be in the clone, what
// they say a program reads must be what the program reads, and what they tell a reader to run must
// be something the repository runs. Their examples run in test/docs/examples.test.ts (the README's
// first query among them), and their claims about behaviour in test/docs/claims.test.ts.

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
const README = read('README.md');
const PAGES = [
  'README.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const SCRIPTS = Object.keys(JSON.parse(read('package.json')).scripts as Record<string, string>);

describe('README and docs/', () => {
  it('points only to files the repository holds', () => {
    for (const page of PAGES) {
      const text = read(page);
      // Repository paths written in code spans are relative to the root; in the README, so are links.
      const pattern =
        page === 'README.md'
          ? /[`(]((?:\.\.\/|docs\/|schema\/|src\/|test\/|bench\/|deploy\/|\.ci\/)[\w./-]*[\w/])/g
          : /`((?:\.\.\/|docs\/|schema\/|src\/|test\/|bench\/|deploy\/|\.ci\/)[\w./-]*[\w/])/g;
      const paths = [...text.matchAll(pattern)].map((match) => match[1] as string);
      if (page === 'README.md') expect(paths.length).toBeGreaterThan(10);
      expect(
        paths.filter((path) => path.startsWith('../')),
        page,
      ).toEqual([]);
      expect(
        paths.filter((path) => !existsSync(new URL(path, ROOT))),
        page,
      ).toEqual([]);
    }
  });

  it('every relative link and #anchor resolves, by GitHub’s heading slugs', () => {
    let checked = 0;
    const broken: string[] = [];
    for (const page of PAGES) {
      const base = new URL(page, ROOT);
      for (const target of markdownLinks(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        checked++;
        const [path = '', anchor] = target.split('#', 2);
        const file = path === '' ? base : new URL(path, base);
        if (!file.pathname.startsWith(new URL(ROOT).pathname) || !existsSync(file)) {
          broken.push(`${page}: ${target} (no such file)`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!file.pathname.endsWith('.md')) {
          broken.push(`${page}: ${target} (anchor into a file that is not Markdown)`);
          continue;
        }
        const slugs = headingSlugs(readFileSync(file, 'utf8'));
        if (!slugs.has(decodeURIComponent(anchor))) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  it('names its three commands in its first code block, and CI runs the test command it names', () => {
    const start = /```sh\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
    const commands = start.split('\n').map((line) => line.split('#')[0]?.trim());
    expect(commands.slice(0, 3)).toEqual(['npm ci', 'npm start', 'npm test']);
    expect(README).toContain('`npm run test:quick`');
    // .ci/run installs what the repository needs, runs these two, then the tier npm test leaves out.
    const ci = read('.ci/run');
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).toMatch(/^counted npm test$/m);
    expect(ci).toMatch(/^counted npm run test:ci$/m);
    expect(README).toContain('`npm run test:ci`');
  });

  it('every docs/ page is one link from the README', () => {
    const linked = new Set(
      markdownLinks(README)
        .map((target) => target.split('#')[0])
        .filter((path): path is string => path?.startsWith('docs/') === true),
    );
    expect(PAGES.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
  });

  it('shows only commands the repository runs: npm scripts that exist, node on files that exist', () => {
    const missing: string[] = [];
    let npmRuns = 0;
    for (const page of PAGES) {
      const { npmScripts, nodeFiles } = shownCommands(read(page));
      npmRuns += npmScripts.length;
      for (const script of npmScripts)
        if (!SCRIPTS.includes(script)) missing.push(`${page}: npm run ${script}`);
      for (const file of nodeFiles)
        if (!existsSync(new URL(file, ROOT))) missing.push(`${page}: node ${file}`);
    }
    expect(npmRuns).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });

  it('passes scripts only options they read (parseArgs options of the file the script runs)', () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    const unknown: string[] = [];
    let flags = 0;
    for (const page of PAGES) {
      for (const { script, flag } of shownCommands(read(page)).npmFlags) {
        flags++;
        const file = /^node (\S+)$/.exec(scripts[script] ?? '')?.[1];
        const source = file ? withRelativeImports(file) : '';
        // `--no-x` is parseArgs' negation of boolean `x` when the file allows negatives.
        const negated =
          flag.startsWith('no-') && source.includes('allowNegative: true') ? flag.slice(3) : flag;
        if (!source.includes(`${negated}: {`) && !source.includes(`'${negated}': {`)) {
          unknown.push(`${page}: npm run ${script} -- --${flag}`);
        }
      }
    }
    expect(flags).toBeGreaterThan(10);
    expect(unknown).toEqual([]);
  });

  it('the reference service table lists exactly the variables src/petstore reads', () => {
    const page = read('docs/reference-service.md');
    const start = page.indexOf('<!-- petstore:start -->');
    const section = page.slice(start, page.indexOf('## Endpoints', start));
    const listed = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]);
    const readVars = new Set<string>();
    for (const file of readdirSync(new URL('src/petstore/', ROOT))) {
      const source = readFileSync(new URL(`src/petstore/${file}`, ROOT), 'utf8');
      for (const match of source.matchAll(/process\.env\.([A-Z_]+)/g)) readVars.add(match[1] as string);
    }
    expect(listed.length).toBeGreaterThan(0);
    expect(new Set(listed)).toEqual(readVars);
  });
});

describe('the Markdown reader behind these checks', () => {
  it('slugs headings as GitHub does', () => {
    const slugs = headingSlugs(
      [
        '# pet-gateway',
        '## Mobile apps: trusted (persisted) operations',
        '### How `_entities` resolves pets',
        '### All cores: `WORKERS`',
        '## Error codes',
        '### Error codes',
        '```sh',
        '# not a heading',
        '```',
        '## Links [to docs](docs/x.md) and *emphasis*',
      ].join('\n'),
    );
    expect([...slugs]).toEqual([
      'pet-gateway',
      'mobile-apps-trusted-persisted-operations',
      'how-_entities-resolves-pets',
      'all-cores-workers',
      'error-codes',
      'error-codes-1',
      'links-to-docs-and-emphasis',
    ]);
  });

  it('finds links outside code, and commands inside it', () => {
    const text = [
      'See [a](docs/a.md#x) and ![b](b.png), not `[c](c.md)`.',
      '```sh',
      'npm run bench -- --smoke   # [d](d.md)',
      'node_modules/.bin/node src/petstore/main.ts',
      '```',
      'Run `npm run chaos` or `node bench/parse.ts`.',
    ].join('\n');
    expect(markdownLinks(text)).toEqual(['docs/a.md#x', 'b.png']);
    expect(shownCommands(text)).toEqual({
      npmScripts: ['bench', 'chaos'],
      nodeFiles: ['src/petstore/main.ts', 'bench/parse.ts'],
      npmFlags: [{ script: 'bench', flag: 'smoke' }],
    });
    expect(
      shownCommands('`npm run bench -- --workload x --gateway-node-args="--max-old-space-size=1"` # --not')
        .npmFlags,
    ).toEqual([
      { script: 'bench', flag: 'workload' },
      { script: 'bench', flag: 'gateway-node-args' },
    ]);
  });
});

/** A script's source and that of the files it imports by relative path (where its options may be parsed). */
function withRelativeImports(file: string): string {
  const source = read(file);
  const dir = file.slice(0, file.lastIndexOf('/') + 1);
  const imported = [...source.matchAll(/from '\.\/([\w./-]+\.ts)'/g)].map((match) =>
    read(`${dir}${match[1]}`),
  );
  return [source, ...imported].join('\n');
}
