import { readFileSync } from 'node:fs';
import MarkdownIt from 'markdown-it';

/**
 * Claims about behaviour, read from the page that makes them: a test holding a sentence true finds
 * it by its beginning, so a failure quotes the sentence (with its page and line), and rewording the
 * sentence without the test fails too, naming it.
 */

const ROOT = new URL('../../', import.meta.url);
// GitHub's flavour: tables are tables, so a claim in a table cell is found in its cell.
const markdown = new MarkdownIt();

/** The sentence of `page` that begins with `beginning`, as written (code spans keep their backticks). */
export function sentence(page: string, beginning: string): string {
  const tokens = markdown.parse(readFileSync(new URL(page, ROOT), 'utf8'), {});
  let line = 1;
  for (const token of tokens) {
    // Inline tokens in table cells carry no line: the row's opening token before them does.
    if (token.map) line = token.map[0] + 1;
    if (token.type !== 'inline') continue;
    // A paragraph's or list item's text with its line breaks as spaces.
    const text = token.content.replace(/\s*\n\s*/g, ' ');
    const start = text.indexOf(beginning);
    if (start === -1) continue;
    return `${text.slice(start, sentenceEnd(text, start))} (${page}:${line})`;
  }
  throw new Error(`${page} holds no sentence beginning "${beginning}": reword the test with the sentence`);
}

/** Where the sentence starting at `start` ends: a full stop outside code, then a space or the end. */
function sentenceEnd(text: string, start: number): number {
  let code = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (char === '`') code = !code;
    else if (
      !code &&
      (char === '.' || char === '!' || char === '?') &&
      (i + 1 === text.length || text[i + 1] === ' ')
    )
      return i + 1;
  }
  return text.length;
}
