// @tier slow: the compiler, the linter and codegen as processes, over the whole checkout

import { describe, expect, it } from 'vitest';
import { spawnWatched } from './support/process.ts';

// The checks package.json names, each run as `npm run <name>` runs it: a type error, a lint finding
// or a schema out of step with its generated files fails `npm test` here, named. They run among the
// slow files, whose time goes mostly to waiting on the processes they start, rather than before
// every test as a chain of their own.
const CHECKS = ['typecheck', 'lint', 'codegen:check', 'example:check'] as const;

describe('the checkout’s own checks', () => {
  it.concurrent.each(CHECKS)('npm run %s passes', { timeout: 180_000 }, async (name) => {
    const check = spawnWatched('npm', ['run', '--silent', name], {
      inheritEnv: true,
      name: `npm run ${name}`,
    });
    const code = await check.exited;
    expect(code, check.output()).toBe(0);
  });
});
