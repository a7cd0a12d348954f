// @tier ci: loads the machine on purpose, and its proof of p99 latency while Redis is down must measure only its own load

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatClusterReport, runClusterChaos } from '../../chaos/cluster.ts';
import { haveRedisServer } from '../support/redis.ts';

// The cluster run, short: two gateway instances behind nginx sharing Redis; one instance and the
// reference service SIGKILLed and restarted, Redis frozen, resumed, killed and restarted. Fewer keys
// and requests in flight than the default; memory is read for 3 s after a full collection (the run
// asks the instance's inspector for one), so it need not wait for V8's memory reducer.
// nginx comes with .ci/run; locally without it the run is skipped, in CI it fails.
const haveNginx = existsSync('/usr/sbin/nginx') || Boolean(process.env.CI);

describe.skipIf(!haveRedisServer('cluster-chaos.test') || !haveNginx)(
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
