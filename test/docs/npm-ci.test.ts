// @tier slow: runs npm ci as a dry run

import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// #44 item 4: the first thing a newcomer reads is what `npm ci` prints. Run by the machine's own npm
// (and the Node under it, often older than the project's Node 24), on a copy of the manifests: a dry
// run resolves the lockfile and checks every package's engines as the real install does, and
// installs nothing.

const ROOT = new URL('../../', import.meta.url);
const MACHINE_NPM = ['/usr/bin/npm', '/usr/local/bin/npm'].find((path) => existsSync(path));

describe('npm ci on a fresh clone', () => {
  it.skipIf(MACHINE_NPM === undefined)(
    'prints no EBADENGINE warnings, and README says why any warning could appear',
    { timeout: 60_000 },
    async () => {
      const copy = mkdtempSync(join(tmpdir(), 'pet-gateway-npm-ci-'));
      try {
        for (const file of ['package.json', 'package-lock.json', '.npmrc', 'examples/web/package.json']) {
          if (!existsSync(new URL(file, ROOT))) continue;
          mkdirSync(join(copy, file, '..'), { recursive: true });
          copyFileSync(new URL(file, ROOT), join(copy, file));
        }
        const { stdout, stderr } = await promisify(execFile)(
          MACHINE_NPM as string,
          ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'],
          { cwd: copy, env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: copy } },
        );
        const output = `${stdout}${stderr}`;
        expect(output).not.toContain('EBADENGINE');
        // A dry run lists what it would add; a real one prints its one summary line instead.
        expect(output.split('\n').filter((line) => /^npm warn/i.test(line))).toEqual([]);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
      expect(readFileSync(new URL('README.md', ROOT), 'utf8')).toMatch(/loglevel=error/);
    },
  );
});
