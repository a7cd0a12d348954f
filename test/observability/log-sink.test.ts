// @tier slow: npm start writing to stalled and full sinks

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { openSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.ts';
import { startGateway } from '../support/gateway.ts';
import { marked } from '../support/leftovers.ts';
import { npmStart, type StartedGateway } from '../support/npm-start.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function pets(origin: string, key: string | undefined, name = 'Logged'): Promise<number> {
  const response = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: `query ${name} { pets(limit: 1) { id } }` }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('stdout to a reader that stops reading (a stalled log shipper)', () => {
  let gateway: StartedGateway | undefined;
  afterEach(async () => {
    gateway?.resumeStdout();
    await gateway?.stop();
  });

  it('keeps answering (3,000 requests, /health), drops what does not fit, and says how many once the reader resumes', async () => {
    gateway = await npmStart({ LOG_BUFFER_BYTES: '65536' });
    const started = gateway;
    started.pauseStdout();
    const statuses = new Map<number, number>();
    for (let i = 0; i < 3000; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => pets(started.origin, started.key)));
      for (const status of batch) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: 3000 });
    const health = await fetch(`${started.origin}/health`);
    expect(health.status).toBe(200);
    const metrics = await (await fetch(`${started.origin}/metrics`)).text();
    const dropped = Number(/^pet_gateway_log_lines_dropped_total (\d+)$/m.exec(metrics)?.[1]);
    expect(dropped).toBeGreaterThan(0);

    started.resumeStdout();
    const warned = () => started.tail().find((line) => line.includes('"droppedLines"'));
    for (let i = 0; i < 100 && !warned(); i++) {
      // The count is written once the backlog drains: a new line or two nudges the sink.
      await pets(started.origin, started.key);
      await sleep(50);
    }
    const line = JSON.parse(warned() ?? '{}') as { level?: number; droppedLines?: number; msg?: string };
    expect(line).toMatchObject({ level: 40, msg: 'log lines dropped: the log reader did not keep up' });
    expect(line.droppedLines).toBeGreaterThanOrEqual(dropped);
    // Lines flow again after it.
    await pets(started.origin, started.key, 'AfterTheDrop');
    for (let i = 0; i < 50 && !started.tail().some((one) => one.includes('"AfterTheDrop"')); i++)
      await sleep(20);
    expect(started.tail().some((one) => one.includes('"AfterTheDrop"'))).toBe(true);
  }, 120_000);
});

describe('stdout to a full device (> /dev/full)', () => {
  it('keeps serving; says once on stderr that writing the log failed', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--max-semi-space-size=16', 'src/main.ts'], {
      cwd: new URL('../..', import.meta.url),
      env: marked({
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        HOST: '127.0.0.1',
        PETSTORE_DB: ':memory:',
        PETSTORE_API_KEY: 'full-device-key',
      }),
      stdio: ['ignore', openSync('/dev/full', 'w'), 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    try {
      const origin = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 200; i++) {
        if (
          await fetch(`${origin}/health`).then(
            (r) => r.ok,
            () => false,
          )
        )
          break;
        await sleep(50);
      }
      const statuses: number[] = [];
      for (let i = 0; i < 100; i++) statuses.push(await pets(origin, 'full-device-key'));
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      expect(child.exitCode).toBeNull();
      expect((await fetch(`${origin}/health`)).status).toBe(200);
      expect(stderr.match(/writing the log failed \(ENOSPC\)/g)).toHaveLength(1);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }, 60_000);
});

describe('client input in log lines', () => {
  let upstream: FakeUpstream;
  afterEach(async () => {
    await upstream?.close();
  });

  it('caps an operation name at 64 characters, as spans do: a 65,000-character name makes a short line', async () => {
    upstream = await startFakeUpstream();
    upstream.tokens.add('name-token');
    const lines: string[] = [];
    const gateway = await startGateway({
      upstreamUrl: upstream.url,
      gateway: { logger: createLogger('info', { write: (line: string) => void lines.push(line) }) },
    });
    try {
      const name = `N${'x'.repeat(64_999)}`;
      for (const fastLane of [false, true]) {
        // The second time the document is prepared: the fast lane writes the line.
        const response = await fetch(gateway.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer name-token' },
          body: JSON.stringify({ query: `query ${name} { pets(limit: 1) { id } }` }),
        });
        expect(response.status, String(fastLane)).toBe(200);
      }
      const logged = lines.filter((line) => line.includes('"msg":"operation"'));
      expect(logged).toHaveLength(2);
      for (const line of logged) {
        expect(line.length).toBeLessThan(1024);
        expect(JSON.parse(line).operationName).toBe(name.slice(0, 64));
      }
    } finally {
      await gateway.close();
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('lines written in blocks', () => {
  it('writes the lines of the last operations before SIGTERM before the process exits', async () => {
    const started = await npmStart();
    // Well under the block's 100 ms: these lines are still waiting when SIGTERM arrives.
    const names = ['LastA', 'LastB', 'LastC'];
    for (const name of names) expect(await pets(started.origin, started.key, name)).toBe(200);
    await started.stop();
    const written = started.tail().filter((line) => line.includes('"msg":"operation"'));
    for (const name of names)
      expect(
        written.some((line) => line.includes(`"operationName":"${name}"`)),
        name,
      ).toBe(true);
  });

  it('writes a line within its time bound when nothing else comes', async () => {
    const started = await npmStart();
    try {
      expect(await pets(started.origin, started.key, 'Lonely')).toBe(200);
      const asked = performance.now();
      while (
        !started.tail().some((line) => line.includes('"operationName":"Lonely"')) &&
        performance.now() - asked < 2000
      )
        await sleep(10);
      expect(started.tail().some((line) => line.includes('"operationName":"Lonely"'))).toBe(true);
    } finally {
      await started.stop();
    }
  });
});
