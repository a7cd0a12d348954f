// @tier unit

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { testTiers, tierOf } from './tiers.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const file = 'test/x.test.ts';

describe('a test file’s tier', () => {
  it('is the one its own line declares, with the reason the slower tiers give', () => {
    expect(tierOf(file, "// @tier unit\n\nimport { it } from 'vitest';\n")).toBe('unit');
    expect(tierOf(file, '// @tier integration\n')).toBe('integration');
    expect(tierOf(file, '// @tier slow: npm start\n')).toBe('slow');
    expect(tierOf(file, '// @tier alone: measures latency\n')).toBe('alone');
    expect(tierOf(file, '// @tier ci: a minute of load\n')).toBe('ci');
  });

  it('fails, naming the file, when the declaration is missing, doubled, unknown or without its reason', () => {
    expect(() => tierOf(file, "import { it } from 'vitest';\n")).toThrow(
      /^test\/x\.test\.ts: no tier declaration/,
    );
    expect(() => tierOf(file, '// @tier unit\n// @tier slow: x\n')).toThrow(
      /test\/x\.test\.ts: more than one/,
    );
    expect(() => tierOf(file, '// @tier fast\n')).toThrow(/test\/x\.test\.ts: unknown tier "fast"/);
    expect(() => tierOf(file, '// @tier slow\n')).toThrow(/needs its reason/);
    expect(() => tierOf(file, '// @tier alone: \n')).toThrow(/needs its reason/);
    expect(() => tierOf(file, '// @tier ci\n')).toThrow(/needs its reason/);
  });

  it('is never a quick tier for a file that starts processes, nor unit for one that opens sockets', () => {
    const tiers = testTiers(ROOT);
    const text = (path: string) => readFileSync(new URL(path, `file://${ROOT}`), 'utf8');
    const startsProcesses =
      /from '(node:child_process|[./]*support\/(process|npm-start|chromium|nginx)\.ts)'/;
    const opensSockets =
      /from '(node:(http|net|http2)|undici|[./]*support\/(fake-upstream|gateway|redis)\.ts)'/;
    for (const path of [...tiers.unit, ...tiers.integration])
      expect(text(path), path).not.toMatch(startsProcesses);
    for (const path of tiers.unit) expect(text(path), path).not.toMatch(opensSockets);
    expect(tiers.unit).toContain('test/tiers.test.ts');
  });
});
