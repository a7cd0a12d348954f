// @tier unit

import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// docs/architecture.md's "Where is…" table: a newcomer's question, the one file that answers it, and
// what that file defines. The table is the index of the house; a row that no longer holds fails here.

const ROOT = new URL('../../', import.meta.url);
const page = readFileSync(new URL('docs/architecture.md', ROOT), 'utf8');
const section = page.slice(
  page.indexOf('## Where is…'),
  page.indexOf('\n## ', page.indexOf('## Where is…') + 1),
);
const rows = [...section.matchAll(/^\| (.+?) \| `([^`]+)` \| `([^`]+)` \|$/gm)].map(
  ([, question, file, name]) => ({
    question: question ?? '',
    file: file ?? '',
    name: name ?? '',
  }),
);

describe('docs/architecture.md: where is…', () => {
  it('answers at least twenty questions, the ten a newcomer asked first among them', () => {
    expect(rows.length).toBeGreaterThanOrEqual(20);
    const asked = rows.map((row) => row.question).join('\n');
    for (const topic of [
      'rate limit',
      'int64 parse',
      'error codes',
      'CORS',
      'drain',
      'Authorization',
      'request id',
      'compression',
      'body cap',
      'which lane',
    ])
      expect(asked).toContain(topic);
  });

  it('asks each question once', () => {
    expect(new Set(rows.map((row) => row.question)).size).toBe(rows.length);
  });

  for (const { question, file, name } of rows) {
    it(`${question}: ${file} defines ${name}`, () => {
      const url = new URL(file, ROOT);
      expect(existsSync(url), `${file} exists`).toBe(true);
      const text = readFileSync(url, 'utf8');
      const defines = new RegExp(`^export (async )?(function|const|class|interface|type) ${name}\\b`, 'm');
      expect(text).toMatch(defines);
    });
  }
});
