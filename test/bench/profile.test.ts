// @tier unit

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { summariseProfiles } from '../../bench/profile.ts';

/** A profile whose one function ran `micros` microseconds in one sample. */
const profile = (functionName: string, micros: number) => ({
  nodes: [{ id: 1, callFrame: { functionName, url: 'file:///x/src/fast-lane/fast-lane.ts', lineNumber: 9 } }],
  samples: [1],
  timeDeltas: [micros],
});

describe('summariseProfiles', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('adds up the processes of one target, one per round, and keeps targets apart', () => {
    dir = mkdtempSync(join(tmpdir(), 'bench-profiles-'));
    writeFileSync(join(dir, 'gateway-static.1.cpuprofile'), JSON.stringify(profile('serve', 1_000_000)));
    writeFileSync(join(dir, 'gateway-static.3.cpuprofile'), JSON.stringify(profile('serve', 2_000_000)));
    writeFileSync(join(dir, 'gateway-yoga-static.2.cpuprofile'), JSON.stringify(profile('yoga', 500_000)));
    const text = summariseProfiles(dir);
    expect(text).toMatch(/CPU profile of gateway-static, 2 processes \(.*\): 3\.0 s busy/);
    expect(text).toMatch(/CPU profile of gateway-yoga-static, .*: 0\.5 s busy/);
    expect(text).toContain('100.0%  serve  src/fast-lane/fast-lane.ts:10');
  });
});
