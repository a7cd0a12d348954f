import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { testTiers } from './test/tiers.ts';

const require = createRequire(import.meta.url);

/**
 * Tests in three tiers, each file's read off the file itself (test/tiers.ts: where it lives and what
 * it starts), so a new file lands in its tier without a list to keep. `npm test` (and CI) runs all
 * three; `npm run test:quick` runs the first two.
 */
const tiers = testTiers(dirname(fileURLToPath(import.meta.url)));

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
    // fails the run (test/support/no-leftovers.ts).
    globalSetup: ['test/support/no-leftovers.ts'],
    hookTimeout: 30_000,
    // Two workers for the first two tiers (they hold a core each at most); the slow tier after
    // them, one file at a time: its files start processes of their own, and some of them compare
    // latencies, which another file's load would skew.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: tiers.unit } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: tiers.integration,
        },
      },
      {
        extends: true,
        test: { name: 'slow', include: tiers.slow, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
