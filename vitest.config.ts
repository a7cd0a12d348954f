import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { testTiers } from './test/tiers.ts';

const require = createRequire(import.meta.url);

/**
 * Tests in five tiers, each file's declared by the file itself (`// @tier …`, read by test/tiers.ts).
 * `npm test` runs the first four, `npm run test:quick` the first two, `npm run test:ci` the fifth
 * (.ci/run runs `npm test`, then that).
 */
const tiers = testTiers(dirname(fileURLToPath(import.meta.url)));

// The suite starts the gateway (npm start, workers, the bench's targets) in well over a hundred
// processes, each compiling the same modules: Node's compile cache, inherited by every process a
// test starts, spares most of that. It changes no behaviour: a stale or unwritable cache is ignored.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'pet-gateway-test-compile-cache');

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (`main`) and ESM (`module`) side by side. Node loads the CJS build for
    // everyone; Vite would hand our sources the ESM build while Yoga and Pothos get the CJS one, and
    // two graphql instances break `instanceof GraphQLError` at run time. Pin the one Node uses.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    testTimeout: 20_000,
    // Every process a test starts carries the run's marker; what still runs with it at the end
    // fails the run (test/support/no-leftovers.ts). Chromium is found (unpacked) once, before any
    // browser test (test/support/chromium-setup.ts).
    globalSetup: ['test/support/no-leftovers.ts', 'test/support/chromium-setup.ts'],
    hookTimeout: 30_000,
    // Two workers, each at most a core. A worker runs its files one after another in one module
    // graph: importing Yoga, Pothos and graphql afresh for each file cost more than most files'
    // tests. So a file must leave nothing behind for the next: servers closed, timers, spies and
    // process.env restored, processes ended.
    isolate: false,
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: tiers.unit } },
      { extends: true, test: { name: 'integration', include: tiers.integration } },
      // After those, three slow files at a time: their time goes to waiting on the processes they
      // start, which leaves the cores idle one or two files at a time, and none of them measures
      // what a neighbour's load would skew (those are `alone`).
      {
        extends: true,
        test: { name: 'slow', include: tiers.slow, maxWorkers: 3, sequence: { groupOrder: 1 } },
      },
      // Last, one file at a time: these load the machine or hold latencies and memory to bounds.
      {
        extends: true,
        test: { name: 'alone', include: tiers.alone, maxWorkers: 1, sequence: { groupOrder: 2 } },
      },
      // Not in `npm test` (which names the four above): `npm run test:ci`, which .ci/run runs after it.
      {
        extends: true,
        test: { name: 'ci', include: tiers.ci, maxWorkers: 1, sequence: { groupOrder: 3 } },
      },
    ],
  },
});
