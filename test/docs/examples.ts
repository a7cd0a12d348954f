import MarkdownIt from 'markdown-it';

/**
 * The fenced examples of a Markdown page, read with markdown-it (GitHub's flavour), and what the docs
 * tests do with each. The conventions, for whoever writes a page (docs/testing.md repeats them):
 *
 * - A ```sh block whose every command is `curl …` against `http://localhost:4000` runs with real
 *   curl against a gateway started as `npm start` starts it (embedded store, freshly seeded), `$KEY`
 *   holding the key it printed. A block that is exactly `[VAR=value …] npm start` starts a gateway
 *   with those settings.
 * - A ```graphql block holding an operation runs, with the key; one holding only type definitions
 *   must be the gateway's schema (descriptions and order aside).
 * - The next ```text or ```json block after a run block (prose between, no heading) is what it
 *   prints, compared after normalising (below). Without one, a command must only succeed.
 * - `<!-- output-of: <command> -->` directly before a ```text/```json block: that block is what
 *   `<command>` (as above: curl lines, or `[VAR=value …] npm start`) prints, for output shown
 *   apart from its command.
 * - `<!-- not-run: <reason> -->` directly before any block: not run, for the reason given (nor is
 *   the text/json block after it, what it prints). Every other block must be runnable as above: a
 *   page with a block that is neither fails, naming it.
 *
 * Normalised before comparing, in both texts: ports of loopback URLs (`localhost:4000`), UUIDs,
 * ISO timestamps and durations in ms. In shown output, `…` stands for any text within a line (as
 * doctest's ELLIPSIS). JSON is compared as JSON when the shown block parses.
 */

// GitHub's flavour, HTML included: the markers are HTML comments.
const markdown = new MarkdownIt({ html: true });

export type Example =
  | { kind: 'curl'; page: string; line: number; script: string; output?: Shown }
  | { kind: 'start'; page: string; line: number; env: Record<string, string>; output?: Shown }
  | { kind: 'operation'; page: string; line: number; document: string; output?: Shown }
  | { kind: 'schema'; page: string; line: number; sdl: string }
  | { kind: 'not-run'; page: string; line: number; lang: string; reason: string; text: string }
  | { kind: 'unmarked'; page: string; line: number; lang: string; problem: string };

/** A block showing what an example prints. */
export interface Shown {
  line: number;
  lang: string;
  text: string;
}

interface Fence {
  line: number;
  lang: string;
  text: string;
  notRun?: string;
  outputOf?: string;
  /** Whether a heading comes between the previous fence and this one. */
  afterHeading: boolean;
}

const OUTPUT_LANGS = new Set(['text', 'json']);

/** Every fenced block of `text` (the page `page`) as an example, in page order. */
export function examples(page: string, text: string): Example[] {
  const fences: Fence[] = [];
  let marker: { end: number; notRun?: string; outputOf?: string } | undefined;
  let heading = false;
  for (const token of markdown.parse(text, {})) {
    if (token.type === 'heading_open') heading = true;
    if (token.type === 'html_block' && token.map) {
      const notRun = /^\s*<!--\s*not-run:(.*?)-->\s*$/s.exec(token.content)?.[1]?.trim();
      const outputOf = /^\s*<!--\s*output-of:(.*?)-->\s*$/s.exec(token.content)?.[1]?.trim();
      marker =
        notRun !== undefined || outputOf !== undefined
          ? {
              end: token.map[1],
              ...(notRun !== undefined ? { notRun } : {}),
              ...(outputOf ? { outputOf } : {}),
            }
          : undefined;
      continue;
    }
    if (token.type !== 'fence' || !token.map) continue;
    const line = token.map[0];
    const directly = marker !== undefined && marker.end === line ? marker : undefined;
    fences.push({
      line: line + 1,
      lang: token.info.trim().split(/\s+/)[0] ?? '',
      text: token.content,
      ...(directly?.notRun !== undefined ? { notRun: directly.notRun } : {}),
      ...(directly?.outputOf !== undefined ? { outputOf: directly.outputOf } : {}),
      afterHeading: heading,
    });
    marker = undefined;
    heading = false;
  }

  const out: Example[] = [];
  for (let i = 0; i < fences.length; i++) {
    const fence = fences[i] as Fence;
    const { line, lang } = fence;
    const next = fences[i + 1];
    if (fence.notRun !== undefined) {
      out.push(
        fence.notRun === ''
          ? { kind: 'unmarked', page, line, lang, problem: 'its not-run marker gives no reason' }
          : { kind: 'not-run', page, line, lang, reason: fence.notRun, text: fence.text },
      );
      // What a command that does not run prints does not run either.
      const printed = next && !next.afterHeading && next.notRun === undefined && next.outputOf === undefined;
      if (printed && OUTPUT_LANGS.has(next.lang) && fence.notRun !== '') {
        out.push({
          kind: 'not-run',
          page,
          line: next.line,
          lang: next.lang,
          reason: `the output of the block at line ${line}`,
          text: next.text,
        });
        i++;
      }
      continue;
    }
    const output = (): Shown | undefined => {
      if (!next || next.afterHeading || next.notRun !== undefined || next.outputOf !== undefined) return;
      if (!OUTPUT_LANGS.has(next.lang)) return;
      i++;
      return { line: next.line, lang: next.lang, text: next.text };
    };
    const shown = (output?: Shown) => (output ? { output } : {});
    if (fence.outputOf !== undefined) {
      const command = commandExample(page, line, fence.outputOf);
      if (OUTPUT_LANGS.has(lang) && command && command.kind !== 'unmarked')
        out.push({ ...command, output: { line, lang, text: fence.text } });
      else
        out.push({
          kind: 'unmarked',
          page,
          line,
          lang,
          problem: `output-of must precede a text or json block and name curl lines or [VAR=value …] npm start, not "${fence.outputOf}"`,
        });
      continue;
    }
    if (lang === 'sh' || lang === 'bash' || lang === 'shell') {
      const command = commandExample(page, line, fence.text);
      out.push(command.kind === 'unmarked' ? command : { ...command, ...shown(output()) });
      continue;
    }
    if (lang === 'graphql') {
      if (/^\s*(query|mutation|subscription)\b|^\s*\{/m.test(stripComments(fence.text)))
        out.push({ kind: 'operation', page, line, document: fence.text, ...shown(output()) });
      else out.push({ kind: 'schema', page, line, sdl: fence.text });
      continue;
    }
    out.push({
      kind: 'unmarked',
      page,
      line,
      lang,
      problem: `the docs tests cannot run a ${lang || 'plain'} block here`,
    });
  }
  return out;
}

function stripComments(text: string): string {
  return text.replace(/#[^\n]*/g, '');
}

/** Shell text joined into commands: `\` continuations joined, comments and blank lines dropped. */
export function commands(script: string): string[] {
  return script
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$|^\s*#.*$/, '').trim())
    .filter((line) => line !== '');
}

const START = /^((?:[A-Z_][A-Z0-9_]*=\S*\s+)*)npm start$/;

/** A shell script as an example: curl lines, or one `[VAR=value …] npm start`. */
function commandExample(
  page: string,
  line: number,
  script: string,
): Extract<Example, { kind: 'curl' | 'start' | 'unmarked' }> {
  const lines = commands(script);
  const start = lines.length === 1 ? START.exec(lines[0] as string) : null;
  if (start) {
    const env: Record<string, string> = {};
    for (const assignment of (start[1] ?? '').trim().split(/\s+/).filter(Boolean)) {
      const [name, ...value] = assignment.split('=');
      env[name as string] = value.join('=');
    }
    return { kind: 'start', page, line, env };
  }
  if (
    lines.length > 0 &&
    lines.every((command) => /^curl\s.*http:\/\/localhost:4000[/\s'"]/.test(`${command} `))
  ) {
    return { kind: 'curl', page, line, script: lines.join('\n') };
  }
  return {
    kind: 'unmarked',
    page,
    line,
    lang: 'sh',
    problem: 'only curl lines against http://localhost:4000, or [VAR=value …] npm start, run here',
  };
}

/** What differs between shown and actual output after normalising, or undefined when they agree. */
export function difference(shown: Shown, actual: string): string | undefined {
  const expected = normalise(shown.text);
  const got = normalise(actual);
  if (shown.lang === 'json' || looksLikeJson(expected)) {
    const wanted = parseJson(expected);
    const received = parseJson(got);
    if (wanted !== undefined && received !== undefined) {
      return JSON.stringify(wanted) === JSON.stringify(received)
        ? undefined
        : `shown:\n${JSON.stringify(wanted)}\ngot:\n${JSON.stringify(received)}`;
    }
  }
  const pattern = new RegExp(`^${expected.split('…').map(escapeRegExp).join('[^\\n]*?')}$`);
  return pattern.test(got) ? undefined : `shown:\n${expected}\ngot:\n${got}`;
}

function looksLikeJson(text: string): boolean {
  return /^[[{]/.test(text) && !text.includes('…');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Ports, UUIDs, timestamps and durations, which differ from run to run. */
export function normalise(text: string): string {
  return text
    .replace(/http:\/\/(?:localhost|127\.0\.0\.1|\[::1\]):\d+/g, 'http://localhost:4000')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>')
    .replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g, '<time>')
    .replace(/\b\d+(?:\.\d+)? ?ms\b/g, '<ms>')
    .replace(/"durationMs":\d+(?:\.\d+)?/g, '"durationMs":<ms>')
    .replace(/[ \t]+$/gm, '')
    .replace(/\s+$/, '');
}
