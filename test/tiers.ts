import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * Which tier a test file belongs to, read off the file itself: where it lives and what it starts.
 * - slow: it starts other processes or tools (npm start, workers, the reference service as a
 *   process, Redis, nginx, kubectl, Chromium, the bench or chaos runs), lives where only such tests
 *   live, or says `@tier slow` in its header with the reason (long property and load runs).
 * - integration: it starts real HTTP servers in this process (the tests' upstream, the reference
 *   service, the gateway) or opens sockets.
 * - unit: none of that: the code's own rules.
 */
export type Tier = 'unit' | 'integration' | 'slow';

const SLOW_PLACES = /^test\/(deploy|browser|examples)\//;
const STARTS_PROCESSES =
  /from '(node:child_process|[./]*support\/(process|npm-start|chromium|kustomize|nginx)\.ts|[./]*chaos\/(processes|traffic|chaos|cluster)\.ts|[./]*bench\/(run|processes|wrk|load|tailcall)\.ts)'|@tier slow/;
const STARTS_SERVERS =
  /from '(node:(http|net|http2)|undici|[./]*support\/(fake-upstream|fixture|gateway|graphql|redis)\.ts|[./]*src\/(petstore|gateway|edge)\/?[^']*)'/;

/** The file's text with that of the test helpers it imports (`./helpers.ts`), which may start things. */
function withHelpers(path: string): string {
  const text = readFileSync(path, 'utf8');
  const helpers = [...text.matchAll(/from '(\.\/[\w-]+\.ts)'/g)].map((match) =>
    join(dirname(path), match[1] ?? ''),
  );
  return [
    text,
    ...helpers.filter((helper) => existsSync(helper)).map((helper) => readFileSync(helper, 'utf8')),
  ].join('\n');
}

export function tierOf(file: string, text: string): Tier {
  if (SLOW_PLACES.test(file) || STARTS_PROCESSES.test(text)) return 'slow';
  if (STARTS_SERVERS.test(text)) return 'integration';
  return 'unit';
}

/** Every test file under `root`/test, by tier. */
export function testTiers(root: string): Record<Tier, string[]> {
  const tiers: Record<Tier, string[]> = { unit: [], integration: [], slow: [] };
  for (const entry of readdirSync(join(root, 'test'), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.test.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    const file = relative(root, path).split('\\').join('/');
    tiers[tierOf(file, withHelpers(path))].push(file);
  }
  for (const list of Object.values(tiers)) list.sort();
  return tiers;
}
