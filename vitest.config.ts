import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (`main`) and ESM (`module`) side by side. Node loads the CJS build for
    // everyone; Vite would hand our sources the ESM build while Yoga and Pothos get the CJS one, and
    // two graphql instances break `instanceof GraphQLError` at run time. Pin the one Node uses.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
