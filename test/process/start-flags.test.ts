// @tier unit

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The gateway's V8 flags (docs/performance.md, "Memory") are set where the process starts: npm start
// (workers inherit them through node:cluster) and the image. The bench measures the gateway with npm
// start's flags. Both places must say the same.

const ROOT = new URL('../../', import.meta.url);
const flagsOf = (words: string[]) => words.filter((word) => word.startsWith('--'));

describe('start flags', () => {
  it('npm start and the image run node with the same flags, a bounded young generation among them', () => {
    const { scripts } = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as {
      scripts: { start: string };
    };
    const start = flagsOf(scripts.start.split(/\s+/));
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(new URL('Dockerfile', ROOT), 'utf8'))?.[1];
    expect(cmd).toBeDefined();
    const image = flagsOf(JSON.parse(cmd as string) as string[]);
    expect(image).toEqual(start);
    expect(start).toContain('--max-semi-space-size=16');
  });
});
