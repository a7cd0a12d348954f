// @tier ci: a gateway and the reference service as processes, the service killed under traffic (as cluster-chaos and the rolling restart); its proofs are its own process's memory and answers (30 s per answer)

import { describe, expect, it } from 'vitest';
import { formatReport, runChaos } from '../../chaos/chaos.ts';

// The cluster run, whose p99 proof needs a quiet machine, is in cluster-chaos.test.ts (alone).

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
