// @tier slow: runs the chaos script as a process

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MIN_DURATION_SECONDS } from '../../chaos/chaos.ts';
import { sentence } from '../docs/claims.ts';

// `npm run chaos` refuses, before starting anything, a run too short to hold its first kill.

const run = (...args: string[]) =>
  spawnSync(process.execPath, ['chaos/run.ts', ...args], {
    cwd: new URL('../..', import.meta.url),
    encoding: 'utf8',
    timeout: 10_000,
  });

describe('npm run chaos -- --duration', () => {
  it('shorter than the first kill needs is refused up front, naming the minimum', () => {
    const claim = sentence('docs/operating.md', '`--duration` is at least');
    expect(/at least (\d+) s/.exec(claim)?.[1], claim).toBe(String(MIN_DURATION_SECONDS));
    expect(MIN_DURATION_SECONDS).toBe(11);
    const started = Date.now();
    const refused = run('--duration', '10', '--instances', '1');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/^chaos: --duration must be an integer from 11 to 3600\n/);
    expect(refused.stdout).toBe('');
    // Up front: no reference service, no keys, no traffic.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
