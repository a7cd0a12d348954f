// @tier slow: the reference service as a process

import { type ChildProcess, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { startPetstore } from '../../src/petstore/server.ts';
import { killSpawned, spawnWatched } from '../support/process.ts';
import { api, tempDir } from './helpers.ts';

const MAIN = new URL('../../src/petstore/main.ts', import.meta.url).pathname;
const tmp = tempDir();
afterAll(() => {
  // A failed assertion must not leave a server running.
  killSpawned();
  tmp.remove();
});

/** The service's environment: `extra` on loopback and a free port, nothing of the runner's. */
function childEnv(extra: Record<string, string>): Record<string, string> {
  return { PORT: '0', HOST: '127.0.0.1', ...extra };
}

interface Child {
  process: ChildProcess;
  url: string;
  /** stdout and stderr so far */
  output(): string;
  exit: Promise<number | null>;
}

/** Spawns `main.ts` and resolves once it printed its listening line. */
async function spawnPetstore(env: Record<string, string>): Promise<Child> {
  const child = spawnWatched(process.execPath, [MAIN], { env: childEnv(env) });
  const [, url = ''] = await child.waitFor(/listening on (\S+)/);
  return { process: child.child, url, output: child.output, exit: child.exited };
}

function keysCreate(dbPath: string, ...args: string[]) {
  return spawnSync(process.execPath, [MAIN, 'keys', ...args], {
    env: childEnv({ PETSTORE_DB: dbPath }),
    encoding: 'utf8',
  });
}

describe('keys CLI', () => {
  test('keys create --account NAME prints a new key once and exits 0; the key then works', async () => {
    const dbPath = join(tmp.dir, 'cli', 'keys.db');
    const first = keysCreate(dbPath, 'create', '--account', 'alice');
    expect(first.status).toBe(0);
    const key = /psk_[A-Za-z0-9_-]{43}/.exec(first.stdout)?.[0];
    expect(key).toBeDefined();
    const second = keysCreate(dbPath, 'create', '--account', 'alice');
    const otherKey = /psk_[A-Za-z0-9_-]{43}/.exec(second.stdout)?.[0];
    expect(otherKey).toBeDefined();
    expect(otherKey).not.toBe(key);

    // The table is no longer empty: no development key on the first start.
    const running = await startPetstore({ dbPath, port: 0 });
    expect(running.devKey).toBeUndefined();
    const origin = running.url.replace(/\/v1$/, '');
    expect((await api(origin, '/v1/pets', { auth: `Bearer ${key}` })).status).toBe(200);
    expect((await api(origin, '/v1/pets', { auth: `Bearer ${otherKey}` })).status).toBe(200);
    expect((await api(origin, '/v1/pets', { auth: 'Bearer psk_unknown' })).status).toBe(401);
    await running.close();
  });

  test.each([
    [['create']],
    [['create', '--account', '  ']],
    [['delete', '--account', 'x']],
    [[]],
    [['create', '--account', 'x', '--admin']],
  ])('keys %j is a usage error (exit 2)', (args) => {
    const result = keysCreate(join(tmp.dir, 'usage.db'), ...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('usage: npm run petstore -- keys create --account NAME');
  });
});

describe('npm run petstore (main.ts)', () => {
  test('prints the dev key on a first start only, logs requests without the key, and SIGTERM lets an in-flight request finish then exits 0', async () => {
    const dbPath = join(tmp.dir, 'main', 'petstore.db');
    const child = await spawnPetstore({ PETSTORE_DB: dbPath });
    const devKey = /development API key.*: (psk_\S+)/.exec(child.output())?.[1];
    expect(devKey).toBeDefined();

    // Expect: 100-continue makes the server confirm it is handling the request before the body is sent.
    const url = new URL(`${child.url}/pets`);
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${devKey}`,
          'content-type': 'application/json',
          expect: '100-continue',
        },
      });
      req.on('continue', () => {
        child.process.kill('SIGTERM');
        // The signal is handled asynchronously; the body goes out after it, on the open connection.
        setImmediate(() => req.end('{"name":"Late","categoryId":1}'));
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
    expect((await response).status).toBe(201);
    expect(await child.exit).toBe(0);
    const output = child.output();
    expect(output).toMatch(/^POST \/v1\/pets 201 \d+\.\dms$/m);
    expect(output.split(devKey as string)).toHaveLength(2); // printed exactly once

    // Restart on the same file: the pet is there, and no new key is printed.
    const again = await spawnPetstore({ PETSTORE_DB: dbPath });
    expect(again.output()).not.toContain('development API key');
    const listed = await fetch(`${again.url}/pets?limit=100`, {
      headers: { authorization: `Bearer ${devKey}` },
    });
    expect(await listed.text()).toContain('"name":"Late"');
    again.process.kill('SIGINT');
    expect(await again.exit).toBe(0);
  });

  test('with PETSTORE_API_KEY set, that key works and no development key is created', async () => {
    const child = await spawnPetstore({
      PETSTORE_DB: join(tmp.dir, 'env-key.db'),
      PETSTORE_API_KEY: 'from-env',
    });
    expect(child.output()).not.toContain('development API key');
    const response = await fetch(`${child.url}/pets`, { headers: { authorization: 'Bearer from-env' } });
    expect(response.status).toBe(200);
    child.process.kill('SIGTERM');
    expect(await child.exit).toBe(0);
    expect(child.output()).not.toContain('from-env');
  });
});

describe('start-up failures', () => {
  test('a port already in use ends with one line naming it, not a stack trace', async () => {
    const taken = await startPetstore({ dbPath: ':memory:', port: 0 });
    const port = new URL(taken.url).port;
    try {
      const child = spawnSync(process.execPath, [MAIN], {
        env: childEnv({ PORT: port, PETSTORE_DB: ':memory:' }),
        encoding: 'utf8',
      });
      expect(child.status).toBe(2);
      expect(child.stderr.trim()).toBe(
        `petstore: port ${port} on 127.0.0.1 is already in use: set PORT to another port (PORT=0 picks a free one)`,
      );
    } finally {
      await taken.close();
    }
  });
});
