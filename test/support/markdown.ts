/**
 * Just enough of Markdown, as GitHub renders it, to check the README and docs/ against the
 * repository: the anchors headings get, the links a reader can follow, the commands a page shows.
 */

/** Lines outside fenced code blocks (``` or ~~~, indented too, as inside list items). */
function prose(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) out.push(line);
  }
  return out;
}

/**
 * The anchors of a page's headings, as GitHub makes them (github-slugger): the heading's text,
 * lower-cased, punctuation dropped (letters, digits, `_`, `-` and spaces stay), spaces as `-`, and
 * `-1`, `-2`… on repeats.
 */
export function headingSlugs(text: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const rendered = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/`([^`]*)`/g, '$1')
      .replace(/<[^>]+>/g, '');
    const base = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}

/** Targets of links and images outside code (a `[x](y)` in a code span is not a link). */
export function markdownLinks(text: string): string[] {
  const targets: string[] = [];
  for (const line of prose(text)) {
    const outsideCode = line.replace(/`[^`]*`/g, '');
    for (const match of outsideCode.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      targets.push(match[1] as string);
    }
  }
  return targets;
}

/**
 * The npm scripts (`npm run X`) and the files run with node (`node path.ts`) a page shows, and the
 * options it passes to scripts (`npm run X -- --flag`; quoted values and `#` comments left out).
 */
export function shownCommands(text: string): {
  npmScripts: string[];
  nodeFiles: string[];
  npmFlags: Array<{ script: string; flag: string }>;
} {
  const npmFlags: Array<{ script: string; flag: string }> = [];
  for (const match of text.matchAll(/\bnpm run ([\w:.-]+) -- ([^#`|\n]*)/g)) {
    const args = (match[2] as string).replace(/"[^"]*"|'[^']*'/g, '');
    for (const flag of args.matchAll(/(?:^|\s)--([a-z][\w-]*)/g)) {
      npmFlags.push({ script: match[1] as string, flag: flag[1] as string });
    }
  }
  return {
    npmFlags,
    npmScripts: [...text.matchAll(/\bnpm run ([\w:.-]+)/g)].map((match) => match[1] as string),
    nodeFiles: [...text.matchAll(/\bnode(?:_modules\/\.bin\/node)?\s+([\w./-]+\.[cm]?[jt]s)\b/g)].map(
      (match) => match[1] as string,
    ),
  };
}
