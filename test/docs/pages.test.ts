// @tier unit

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { examples } from './examples.ts';

// What keeps the docs readable for a newcomer (#54): pages short enough to finish, each a link away
// from the README and back, and the README's first query on its first screen.

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
const DOCS = readdirSync(new URL('docs/', ROOT))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`);

/** A page longer than this is two pages: split it by subject. */
const MAX_LINES = 400;
/** What a reader sees of the README before scrolling, on a laptop's screen. */
const FIRST_SCREEN_LINES = 50;
/** Words a newcomer may be asked to read in README.md and docs/ (#63). */
const MAX_WORDS = 30_000;
/** Written by `npm run bench`, not by people: a run's tables, outside the budget. */
const GENERATED = new Set(['docs/performance-run.md']);

/** Words as `wc -w` counts them: runs of characters between whitespace. */
const words = (text: string) => text.split(/[ \t\n\v\f\r]+/).filter(Boolean).length;

const lines = (text: string) => text.replace(/\n$/, '').split('\n').length;

describe('README and docs/ pages', () => {
  it(`each holds at most ${MAX_LINES} lines`, () => {
    const long = ['README.md', ...DOCS]
      .map((page) => ({ page, lines: lines(read(page)) }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it(`hold at most ${MAX_WORDS.toLocaleString('en-US')} words together (the generated run page aside)`, () => {
    const counted = ['README.md', ...DOCS.filter((page) => !GENERATED.has(page))].map((page) => ({
      page,
      words: words(read(page)),
    }));
    const total = counted.reduce((sum, { words }) => sum + words, 0);
    // Past the budget, the table says where the words are: cut repetition there first.
    const table = [...counted]
      .sort((a, b) => b.words - a.words)
      .map(({ page, words }) => `${String(words).padStart(6)}  ${page}`)
      .join('\n');
    expect(
      total,
      `${total} words, over ${MAX_WORDS}:\n${table}\n${String(total).padStart(6)}  total`,
    ).toBeLessThanOrEqual(MAX_WORDS);
  });

  it('each docs/ page opens with a link back to the README', () => {
    expect(DOCS.length).toBeGreaterThan(10);
    const missing = DOCS.filter((page) => {
      const opening = read(page).split('\n').slice(0, 5).join('\n');
      return !opening.includes('[← README](../README.md)');
    });
    expect(missing).toEqual([]);
  });

  it(`the README shows its first query within its first ${FIRST_SCREEN_LINES} lines, and its answer`, () => {
    const first = examples('README.md', read('README.md')).find(
      (example) => example.kind === 'curl' && example.script.includes('pets('),
    );
    expect(first?.line).toBeLessThan(FIRST_SCREEN_LINES);
    expect(first && 'output' in first ? first.output?.line : undefined).toBeLessThan(FIRST_SCREEN_LINES);
  });

  it('the words only this project uses are defined once, in docs/architecture.md', () => {
    const page = read('docs/architecture.md');
    const glossary = page.slice(
      page.indexOf('## Words this project uses'),
      page.indexOf('\n## ', page.indexOf('## Words this project uses') + 1),
    );
    const defined = [...glossary.matchAll(/^- \*\*([^*]+)\*\*/gm)].map((match) => match[1] as string);
    for (const term of ['Fast lane', 'Prepared operation', 'Plan', 'Coalescing', 'Lane', 'Hand-off'])
      expect(defined).toContain(term);
    // Defined here, not again elsewhere: another page links to the glossary instead.
    const again = ['README.md', ...DOCS.filter((page) => page !== 'docs/architecture.md')].filter((page) =>
      defined.some((term) => read(page).includes(`**${term}**:`)),
    );
    expect(again).toEqual([]);
  });
});
