// @tier slow: npm start's output on pipes, terminals and workers

import { afterEach, describe, expect, it } from 'vitest';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';
import { spawnWatched } from '../support/process.ts';

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
  // The whole line: a chunk of the pipe may end inside it.
  await started.waitFor(/Three.*\n/, 10_000);
  return started.tail().filter((line) => line.includes('Three'));
}

/** Each stdout line as the JSON log line it must be: pino's level, time and service, and a message. */
function jsonLines(lines: string[]): Array<Record<string, unknown>> {
  return lines.map((line) => {
    const event = JSON.parse(line) as Record<string, unknown>;
    expect(event).toMatchObject({
      level: expect.any(Number),
      time: expect.any(String),
      service: 'pet-gateway',
      msg: expect.any(String),
    });
    return event;
  });
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

  it('are all JSON with LOG_FORMAT=json, start-up and SIGTERM lines included, in the shape of the others', async () => {
    gateway = await npmStart({ LOG_FORMAT: 'json' });
    await oneQuery(gateway);
    await gateway.stop();
    const events = jsonLines(gateway.lines());
    const messages = events.map((event) => event.msg);
    expect(messages).toContain('operation');
    expect(messages).toContainEqual(
      expect.stringMatching(/^GraphQL and GraphiQL at http:\/\/127\.0\.0\.1:\d+\/graphql$/),
    );
    expect(messages).toContainEqual(
      expect.stringMatching(/^no UPSTREAM_URL, serving the reference animal store at /),
    );
    expect(messages).toContain(`API key for this run: ${gateway.key}`);
    expect(messages).toContain('SIGTERM, finishing in-flight requests');
    // The shell's `export KEY=…` line is for a person pasting it, not for a log collector.
    expect(gateway.lines().join('\n')).not.toContain('export KEY=');
  });

  it('are all JSON with LOG_FORMAT=json and WORKERS=2, the primary’s lines included', async () => {
    gateway = await npmStart({ LOG_FORMAT: 'json', WORKERS: '2' });
    await gateway.waitFor(/2 workers/);
    await gateway.stop();
    const messages = jsonLines(gateway.lines()).map((event) => event.msg);
    expect(messages).toContainEqual(expect.stringMatching(/^2 workers \(pids \d+, \d+\)$/));
    expect(messages).toContain('SIGTERM, finishing in-flight requests in 2 workers');
  });

  it('are readable lines in a terminal by default (stdout a TTY, under script(1))', async () => {
    // Stopped once the line is out (script(1) passes the SIGTERM on), however long start-up takes.
    const command =
      'LOG_LEVEL=warn PORT=0 PETSTORE_DB=:memory: REDIS_URL=redis://127.0.0.1:1 RESPONSE_CACHE=redis REDIS_KEY_SECRET=0123456789abcdef0123456789abcdef node src/main.ts';
    const terminal = spawnWatched('script', ['-q', '-e', '-c', command, '/dev/null']);
    try {
      const [redisLine] = await terminal.waitFor(/^.*Redis unavailable.*$/m, 30_000);
      expect(redisLine).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}Redis unavailable/);
    } finally {
      await terminal.stop();
    }
  });
});
