// @tier alone: loads the machine on purpose, and its memory proof must measure only its own load

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatReport, runChaos } from '../../chaos/chaos.ts';
import { formatClusterReport, runClusterChaos } from '../../chaos/cluster.ts';
import { haveRedisServer } from '../support/redis.ts';

// Both runs in one file, so they run one after the other: each loads the machine on its own, and
// its memory proof must not measure the other's load.

// A short `npm run chaos`: one kill (SIGKILL) and restart of the reference service under traffic
// from 200 keys. Fewer requests in flight than the default, for a loaded 2-core machine. Memory is
// read for 3 s after a full collection (the run asks the gateway's inspector for one), so it need
// not wait for V8's memory reducer.
describe('npm run chaos', () => {
  it('keeps every proof through a killed and restarted reference service', { timeout: 180_000 }, async () => {
    const report = await runChaos({ durationSeconds: 12, keys: 200, concurrency: 8, afterMs: 3_000 });
    const table = formatReport(report);
    console.log(table);
    expect(report.kills).toEqual(['SIGKILL']);
    for (const proof of report.proofs)
      expect({ proof: proof.name, passed: proof.passed, table }).toMatchObject({ passed: true });
  });
});

// The cluster run, short: two gateway instances behind nginx sharing Redis; one instance and the
// reference service SIGKILLed and restarted, Redis frozen, resumed, killed and restarted. Fewer keys
// and requests in flight than the default; memory is read for 3 s after a full collection (the run
// asks the instance's inspector for one), so it need not wait for V8's memory reducer.
// nginx comes with .ci/run; locally without it the run is skipped, in CI it fails.
const haveNginx = existsSync('/usr/sbin/nginx') || Boolean(process.env.CI);

describe.skipIf(!haveRedisServer('chaos.test') || !haveNginx)(
  'npm run chaos: several instances behind nginx',
  () => {
    it('keeps every proof through a killed instance, a frozen and a killed Redis', {
      timeout: 180_000,
    }, async () => {
      const report = await runClusterChaos({
        durationSeconds: 14,
        keys: 100,
        concurrency: 8,
        redisDownMs: 2_500,
        afterMs: 3_000,
      });
      const table = formatClusterReport(report);
      console.log(table);
      expect(report.events.some((event) => event.includes('Redis SIGKILLed'))).toBe(true);
      expect(report.proofs).toHaveLength(7);
      for (const proof of report.proofs)
        expect({ proof: proof.name, passed: proof.passed, table }).toMatchObject({ passed: true });
    });
  },
);
