import { parseArgs } from 'node:util';
import { formatReport, runChaos } from './chaos.ts';

// `npm run chaos [-- --duration 60 --keys 200 --concurrency 16 --workers 1]`: prints the table,
// exits 1 when a proof fails.

const usage = 'usage: npm run chaos -- [--duration SECONDS] [--keys N] [--concurrency N] [--workers N]';
let values: Record<string, string | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      duration: { type: 'string', default: '60' },
      keys: { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '16' },
      workers: { type: 'string', default: '1' },
    },
  }));
} catch (error) {
  console.error(`chaos: ${(error as Error).message}\n${usage}`);
  process.exit(2);
}
const number = (name: string, min: number, max: number): number => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`chaos: --${name} must be an integer from ${min} to ${max}\n${usage}`);
    process.exit(2);
  }
  return value;
};

const report = await runChaos({
  durationSeconds: number('duration', 5, 3600),
  keys: number('keys', 1, 100_000),
  concurrency: number('concurrency', 1, 512),
  workers: number('workers', 1, 256),
  log: (line) => console.log(`chaos: ${line}`),
});
console.log(`\n${formatReport(report)}`);
process.exit(report.proofs.every((proof) => proof.passed) ? 0 : 1);
