import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatClusterReport, runClusterChaos } from '../chaos/cluster.ts';
import { haveRedisServer } from './support/redis.ts';

// A short `npm run chaos` cluster run: two gateway instances behind nginx sharing Redis; one
// instance and the reference service SIGKILLed and restarted, Redis frozen, resumed, killed and
// restarted. Fewer keys and requests in flight than the default, for a loaded 2-core machine; memory
// is watched for 12 s idle after the run, as in the full run: V8's memory reducer collects after ~8 s.
// nginx comes with .ci/run; locally without it the run is skipped, in CI it fails.
const haveNginx = existsSync('/usr/sbin/nginx') || Boolean(process.env.CI);

describe.skipIf(!haveRedisServer('chaos-cluster.test') || !haveNginx)(
  'npm run chaos: several instances behind nginx',
  () => {
    it('keeps every proof through a killed instance, a frozen and a killed Redis', {
      timeout: 120_000,
    }, async () => {
      const report = await runClusterChaos({
        durationSeconds: 14,
        keys: 100,
        concurrency: 8,
        redisDownMs: 2_500,
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
