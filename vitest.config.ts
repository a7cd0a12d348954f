import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/**
 * Tests in three tiers. `npm test` (and CI) runs all three; `npm run test:quick` runs the first two.
 * - unit: no server, no process, no socket: the code's own rules.
 * - integration: real HTTP servers on 127.0.0.1 in this process (the reference service, the
 *   tests' upstream, the gateway), real clients.
 * - slow: other processes and tools (npm start, workers, nginx, Redis, Chromium, the image, the
 *   bench and chaos runs), and the long property and load runs.
 * A file in neither list below is an integration test, so no test file is left out of `npm test`.
 */
const UNIT = [
  'test/architecture/**',
  'test/bench/chart.test.ts',
  'test/config.test.ts',
  'test/contract/openapi.test.ts',
  'test/execution/**',
  'test/gateway/endpoints.test.ts',
  'test/http/graphiql-table.test.ts',
  'test/http/prepared-lru.test.ts',
  'test/readme.test.ts',
  'test/start-flags.test.ts',
  'test/upstream/deadline.test.ts',
  'test/upstream/exact-json.test.ts',
];
const SLOW = [
  'test/bench.test.ts',
  'test/browser/**',
  'test/chaos-args.test.ts',
  'test/chaos.test.ts',
  'test/deploy/**',
  'test/docs/claims.test.ts',
  'test/examples/**',
  'test/hardening/flood.test.ts',
  'test/hardening/properties.test.ts',
  'test/http/slow-bodies.test.ts',
  'test/main.test.ts',
  'test/npm-start-signals.test.ts',
  'test/petstore/process.test.ts',
  'test/redis-keys.test.ts',
  'test/workers.test.ts',
];

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (`main`) and ESM (`module`) side by side. Node loads the CJS build for
    // everyone; Vite would hand our sources the ESM build while Yoga and Pothos get the CJS one, and
    // two graphql instances break `instanceof GraphQLError` at run time. Pin the one Node uses.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two workers for the first two tiers (they hold a core each at most); the slow tier after
    // them, one file at a time: its files start processes of their own, and some of them compare
    // latencies, which another file's load would skew.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...UNIT, ...SLOW],
        },
      },
      {
        extends: true,
        test: { name: 'slow', include: SLOW, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
