import { describe, expect, it } from 'vitest';
import { formatReport, runChaos } from '../chaos/chaos.ts';

// A short `npm run chaos`: one kill (SIGKILL) and restart of the reference service under traffic
// from 200 keys. Fewer requests in flight than the default, for a loaded 2-core machine.
describe('npm run chaos', () => {
  it('keeps every proof through a killed and restarted reference service', { timeout: 180_000 }, async () => {
    const report = await runChaos({ durationSeconds: 12, keys: 200, concurrency: 8 });
    const table = formatReport(report);
    console.log(table);
    expect(report.kills).toEqual(['SIGKILL']);
    for (const proof of report.proofs)
      expect({ proof: proof.name, passed: proof.passed, table }).toMatchObject({ passed: true });
  });
});
