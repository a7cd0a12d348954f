import { parseArgs } from 'node:util';
import { exitOnSignals } from '../test/support/process.ts';
import { formatReport, MIN_DURATION_SECONDS, runChaos } from './chaos.ts';
import { formatClusterReport, runClusterChaos } from './cluster.ts';

// `npm run chaos [-- --duration 60 --keys 200 --concurrency 16 --workers 1 --instances 2]`: the
// single-instance run, then the run of several instances behind nginx sharing Redis (skipped with
// --instances 1). Prints both tables, exits 1 when a proof fails.

const usage =
  'usage: npm run chaos -- [--duration SECONDS] [--keys N] [--concurrency N] [--workers N] [--instances N]';
exitOnSignals();

let values: Record<string, string | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      duration: { type: 'string', default: '60' },
      keys: { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '16' },
      workers: { type: 'string', default: '1' },
      instances: { type: 'string', default: '2' },
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

// Shorter, the run would end before its first kill and fail its breaker proof after a minute's work.
const durationSeconds = number('duration', MIN_DURATION_SECONDS, 3600);
const keys = number('keys', 1, 100_000);
const concurrency = number('concurrency', 1, 512);
const workers = number('workers', 1, 256);
const instances = number('instances', 1, 16);
const log = (line: string) => console.log(`chaos: ${line}`);

const report = await runChaos({ durationSeconds, keys, concurrency, workers, log });
console.log(`\n${formatReport(report)}\n`);
let passed = report.proofs.every((proof) => proof.passed);
if (instances > 1) {
  // The faults take about 15 s; the rest of the run is the healthy baseline.
  const cluster = await runClusterChaos({
    durationSeconds: Math.max(20, durationSeconds),
    keys,
    concurrency,
    instances,
    log,
  });
  console.log(`\n${formatClusterReport(cluster)}`);
  passed &&= cluster.proofs.every((proof) => proof.passed);
}
process.exit(passed ? 0 : 1);
