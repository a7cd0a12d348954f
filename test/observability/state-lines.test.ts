// @tier unit

import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { redisStateLines } from '../../src/observability/state-lines.ts';

const SECRET = '0123456789abcdef0123456789abcdef';

/** The lines `redisStateLines` writes for a sequence of Redis states, under `env`. */
function linesFor(env: Record<string, string>, states: Array<'up' | 'down'>) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const report = redisStateLines(logger, loadConfig({ REDIS_URL: 'redis://cache:6379', ...env }));
  for (const state of states) report(state, state === 'down' ? new Error('gone') : undefined);
  return lines;
}

// #44 item 3: what the Redis lines say.
describe('the Redis state lines', () => {
  it('name only what uses Redis: no "response cache bypassed" with the response cache off', () => {
    const [down] = linesFor(
      { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_STORE: 'redis', REDIS_KEY_SECRET: SECRET },
      ['down'],
    );
    expect(down?.msg).toBe('Redis unavailable: rate limit per instance, until it answers again');
    const [all] = linesFor(
      {
        RESPONSE_CACHE: 'redis',
        RATE_LIMIT_PER_MINUTE: '5',
        RATE_LIMIT_STORE: 'redis',
        APQ_STORE: 'redis',
        REDIS_KEY_SECRET: SECRET,
      },
      ['down'],
    );
    expect(all?.msg).toBe(
      'Redis unavailable: response cache bypassed, rate limit per instance, APQ hashes not found, until it answers again',
    );
  });

  it('say each change once, and name the process, so two processes’ identical lines tell apart', () => {
    const lines = linesFor({ RESPONSE_CACHE: 'redis', REDIS_KEY_SECRET: SECRET }, ['up', 'down', 'up', 'up']);
    expect(lines.map((line) => line.msg)).toEqual([
      'Redis connected',
      'Redis unavailable: response cache bypassed, until it answers again',
      'Redis answering: shared again',
    ]);
    for (const line of lines) expect(line.pid).toBe(process.pid);
  });
});
