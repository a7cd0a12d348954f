import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';

// Logs a person reads in a terminal, JSON where a program reads them (#44 item 3).

let gateway: StartedGateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
});

async function oneQuery(started: StartedGateway): Promise<string[]> {
  const response = await fetch(`${started.origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${started.key}` },
    body: JSON.stringify({ query: 'query Three { pets(limit: 3) { id } }' }),
  });
  expect(response.status).toBe(200);
  for (let i = 0; i < 40 && !started.tail().some((line) => line.includes('Three')); i++) await sleep(25);
  return started.tail().filter((line) => line.includes('Three'));
}

describe('log lines', { timeout: 60_000 }, () => {
  it('are JSON when stdout is a pipe (the default, LOG_FORMAT=auto)', async () => {
    gateway = await npmStart();
    const [line] = await oneQuery(gateway);
    expect(JSON.parse(line ?? '')).toMatchObject({ msg: 'operation', operationName: 'Three', status: 200 });
  });

  it('are short readable lines with LOG_FORMAT=pretty: time, level, what happened', async () => {
    gateway = await npmStart({ LOG_FORMAT: 'pretty' });
    const [line = ''] = await oneQuery(gateway);
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}operation Three query 200 [\d.]+ ms ok\b/);
    expect(line.length).toBeLessThan(160);
    expect(line).not.toContain('{');
  });

  it('are readable lines in a terminal by default (stdout a TTY, under script(1))', async () => {
    const command =
      'LOG_LEVEL=warn PORT=0 PETSTORE_DB=:memory: REDIS_URL=redis://127.0.0.1:1 RESPONSE_CACHE=redis REDIS_KEY_SECRET=0123456789abcdef0123456789abcdef timeout -s INT 4 node src/main.ts';
    const { stdout } = await promisify(execFile)('script', ['-q', '-e', '-c', command, '/dev/null'], {
      cwd: new URL('../../', import.meta.url),
      env: { PATH: process.env.PATH ?? '' },
    }).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
    const redisLine = stdout.split(/\r?\n/).find((line) => line.includes('Redis unavailable'));
    expect(redisLine).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}Redis unavailable/);
  });
});
