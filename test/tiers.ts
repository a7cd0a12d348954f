import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Which tier a test file belongs to, as the file itself declares it in a line of its own:
 * `// @tier unit`, `// @tier integration`, `// @tier slow: <why>`, `// @tier alone: <why>` or
 * `// @tier ci: <why>`.
 * - unit: no socket, no process: the code's own rules.
 * - integration: real servers on 127.0.0.1 in the test's own process, Redis.
 * - slow: other processes and tools (npm start, workers, nginx, kubectl, Chromium), or long runs;
 *   two such files may run side by side.
 * - alone: it loads the machine or measures what another file's load would skew (latency, memory),
 *   so it runs with no other test file beside it.
 * - ci: an alone file that proves the whole machine's run (floods, a soak, the bench harness)
 *   rather than a behaviour a change may break: `.ci/run` runs it after `npm test`
 *   (`npm run test:ci`), which stays within its 5 minutes without it.
 * A declaration is read, never guessed: a file without one fails the config load, named.
 */
export const TIERS = ['unit', 'integration', 'slow', 'alone', 'ci'] as const;
export type Tier = (typeof TIERS)[number];

const DECLARATION = /^\/\/ @tier (\S+?)(?::\s*(.*))?$/gm;

export function tierOf(file: string, text: string): Tier {
  const declarations = [...text.matchAll(DECLARATION)];
  const [declaration] = declarations;
  if (declaration === undefined || declarations.length > 1)
    throw new Error(
      `${file}: ${declaration === undefined ? 'no' : 'more than one'} tier declaration; ` +
        `start it with one line "// @tier unit", "// @tier integration", "// @tier slow: <why>", "// @tier alone: <why>" or "// @tier ci: <why>"`,
    );
  const [, tier = '', reason = ''] = declaration;
  if (!(TIERS as readonly string[]).includes(tier))
    throw new Error(`${file}: unknown tier "${tier}" (one of ${TIERS.join(', ')})`);
  // The slower tiers cost every run minutes: each file there says why it cannot be quicker.
  if (tier !== 'unit' && tier !== 'integration' && reason.trim() === '')
    throw new Error(`${file}: "// @tier ${tier}" needs its reason: "// @tier ${tier}: <why>"`);
  return tier as Tier;
}

/** Every test file under `root`/test, by tier. */
export function testTiers(root: string): Record<Tier, string[]> {
  const tiers: Record<Tier, string[]> = { unit: [], integration: [], slow: [], alone: [], ci: [] };
  for (const entry of readdirSync(join(root, 'test'), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.test.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    const file = relative(root, path).split('\\').join('/');
    tiers[tierOf(file, readFileSync(path, 'utf8'))].push(file);
  }
  for (const list of Object.values(tiers)) list.sort();
  return tiers;
}
