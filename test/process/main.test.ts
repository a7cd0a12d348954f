// @tier slow: npm start in each of its configurations

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { listenError } from '../../src/process/start-up-errors.ts';
import { startFakeUpstream, startSlowListUpstream } from '../support/fake-upstream.ts';
import { postJson, post as postTo } from '../support/graphql.ts';
import { killSpawned, startMain } from '../support/process.ts';

afterEach(killSpawned);

/** Spawns `node src/main.ts` as `npm start` does, and collects its output. */
const start = startMain;

describe('npm start', () => {
  it('with no UPSTREAM_URL serves the reference store, prints the URL and a working key, and stops on SIGTERM', async () => {
    const gateway = start({ PORT: '0', HOST: '127.0.0.1', PETSTORE_DB: ':memory:' });
    const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
    const [, key] = await gateway.waitFor(/API key for this run: (\S+)/);
    const health = await fetch(new URL('/health', url));
    expect(health.status).toBe(200);

    const pets = await postJson<{ pets: Array<{ id: string; status: string | null }> }>(
      url as string,
      { query: '{ pets(limit: 100) { id status } }' },
      `Bearer ${key}`,
    );
    expect(pets.errors).toBeUndefined();
    // The embedded store is seeded, so a newcomer sees pets of every status at once.
    expect(new Set(pets.data?.pets.map((pet) => pet.status))).toEqual(
      new Set(['AVAILABLE', 'PENDING', 'SOLD']),
    );

    const html = await fetch(url as string, { headers: { accept: 'text/html' } });
    const page = await html.text();
    expect(page).toContain('Animal store');
    expect(page).toContain(`Bearer ${key}`);

    const refused = await postJson(url as string, { query: '{ pets { id } }' }, 'Bearer wrong');
    expect(refused.errors?.[0]?.extensions?.status).toBe(401);

    gateway.child.kill('SIGTERM');
    const [code] = await once(gateway.child, 'exit');
    expect(code).toBe(0);
    expect(gateway.output()).not.toMatch(/Bearer wrong/);
  });

  it('prints the key as a line a shell takes as it is: export KEY=… (#44 item 8)', async () => {
    const gateway = start({ PORT: '0', HOST: '127.0.0.1', PETSTORE_DB: ':memory:', LOG_LEVEL: 'silent' });
    const [, key] = await gateway.waitFor(/API key for this run: (\S+)/);
    const [line] = await gateway.waitFor(/^export KEY=.*$/m);
    // The whole line, pasted into a shell, sets KEY to the key the curl examples send.
    const { stdout } = await promisify(execFile)('sh', ['-c', `${line}\nprintf %s "$KEY"`]);
    expect(stdout).toBe(key);
  });

  it("with no UPSTREAM_URL refuses names past the embedded service's 200 itself, unless NAME_MAX_LENGTH says otherwise", async () => {
    const create = (name: string) =>
      `mutation { createPet(input: { name: ${JSON.stringify(name)}, categoryId: "1" }) { name } }`;
    for (const [env, refusedBy] of [
      [{}, 'BAD_USER_INPUT'],
      // The operator's own maximum is kept; the store then refuses by its own code.
      [{ NAME_MAX_LENGTH: '300' }, 'INVALID_FIELD'],
    ] as const) {
      const gateway = start({
        PORT: '0',
        HOST: '127.0.0.1',
        PETSTORE_DB: ':memory:',
        LOG_LEVEL: 'silent',
        ...env,
      });
      const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
      const [, key] = await gateway.waitFor(/API key for this run: (\S+)/);
      const longest = await postJson(url as string, { query: create('n'.repeat(200)) }, `Bearer ${key}`);
      expect(longest.errors, longest.text).toBeUndefined();
      const over = await postJson(url as string, { query: create('n'.repeat(201)) }, `Bearer ${key}`);
      expect(over.errors?.[0]?.extensions?.code, over.text).toBe(refusedBy);
      await gateway.stop();
    }
  });

  it('with no UPSTREAM_URL and no HOST listens on this machine only (its key is in the GraphiQL page)', async () => {
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((address) => address?.family === 'IPv4' && !address.internal)?.address;
    const gateway = start({ PORT: '0', PETSTORE_DB: ':memory:' });
    const [, port] = await gateway.waitFor(/GraphiQL at http:\/\/127\.0\.0\.1:(\d+)\/graphql/);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    // From another interface of this machine (as from the network): nothing listens there.
    if (outside === undefined) return console.warn('[main.test] no non-loopback IPv4 address: part skipped');
    const error = await fetch(`http://${outside}:${port}/health`).then(
      () => undefined,
      (failure: Error) => failure.cause as NodeJS.ErrnoException,
    );
    expect(error?.code).toBe('ECONNREFUSED');
  });

  it('on SIGTERM finishes in-flight operations, refuses new connections and exits 0', async () => {
    const upstream = await startSlowListUpstream();
    try {
      const gateway = start({
        PORT: '0',
        HOST: '127.0.0.1',
        UPSTREAM_URL: upstream.url,
        LOG_LEVEL: 'silent',
      });
      const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
      // Three different lists: identical ones would share one upstream call (coalescing).
      const inFlight = Array.from({ length: 3 }, (_, i) =>
        postJson<{ pets: Array<{ name: string }> }>(
          url as string,
          { query: `{ pets(limit: ${i + 1}) { name } }` },
          'Bearer t',
        ),
      );
      while (upstream.requests.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));

      const exited = once(gateway.child, 'exit');
      gateway.child.kill('SIGTERM');
      await gateway.waitFor(/SIGTERM, finishing in-flight requests/);
      const refused = await new Promise<string>((resolve) => {
        const probe = request(url as string, { method: 'POST', agent: false }, () => resolve('answered'));
        probe.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        probe.end('{}');
      });
      expect(refused).toBe('ECONNREFUSED');

      const results = await Promise.all(inFlight);
      for (const result of results) {
        expect(result.status).toBe(200);
        expect(result.data?.pets).toEqual([{ name: 'Slow' }]);
      }
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      await upstream.close();
    }
  });

  it('with PETSTORE_API_KEY keeps that key, and its key line says so without printing it', async () => {
    const gateway = start({
      PORT: '0',
      HOST: '127.0.0.1',
      PETSTORE_DB: ':memory:',
      PETSTORE_API_KEY: 'my-dev-key',
    });
    const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
    await gateway.waitFor(/serving the reference animal store/);
    const pets = await postJson(url as string, { query: '{ pets(limit: 1) { id } }' }, 'Bearer my-dev-key');
    expect(pets.errors).toBeUndefined();
    expect(gateway.output()).toContain(
      'pet-gateway: API key for this run: the PETSTORE_API_KEY you set (not printed)\n',
    );
    expect(gateway.output()).not.toContain('my-dev-key');
  });

  it('with GRAPHIQL=off does not announce GraphiQL; names the upstream with its /v1 path', async () => {
    const upstream = await startFakeUpstream();
    try {
      const gateway = start({
        PORT: '0',
        HOST: '127.0.0.1',
        UPSTREAM_URL: upstream.url,
        GRAPHIQL: 'off',
        LOG_LEVEL: 'silent',
      });
      await gateway.waitFor(/pet-gateway: upstream /);
      expect(gateway.output()).toMatch(/^pet-gateway: GraphQL at http:\/\/127\.0\.0\.1:\d+\/graphql$/m);
      expect(gateway.output()).not.toContain('GraphiQL');
      expect(gateway.output()).toContain(`pet-gateway: upstream ${upstream.url}\n`);
    } finally {
      await upstream.close();
    }
  });

  it('at LOG_LEVEL=warn says when the upstream is unreachable (one line, not one per request) and when the breaker opens', async () => {
    const gateway = start({
      PORT: '0',
      HOST: '127.0.0.1',
      UPSTREAM_URL: 'http://127.0.0.1:9/v1',
      LOG_LEVEL: 'warn',
    });
    const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
    for (let i = 0; i < 5; i++) {
      const result = await postJson(url as string, { query: `{ pets(limit: ${i + 1}) { id } }` }, 'Bearer k');
      expect(result.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    }
    await gateway.waitFor(/circuit breaker open/);
    const warnings = gateway
      .output()
      .split('\n')
      .filter((line) => line.includes('"level":40'));
    expect(warnings.filter((line) => line.includes('upstream unreachable'))).toHaveLength(1);
    expect(warnings.filter((line) => line.includes('"breaker":"open"'))).toHaveLength(1);
  });

  it('in the default configuration answers APQ hashes: not found, registered with the text, then run by hash', async () => {
    const gateway = start({ PORT: '0', HOST: '127.0.0.1', PETSTORE_DB: ':memory:', LOG_LEVEL: 'silent' });
    const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
    const [, key] = await gateway.waitFor(/API key for this run: (\S+)/);
    const query = '{ pets(limit: 2) { id } }';
    const extensions = {
      persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') },
    };
    const post = (body: unknown) =>
      postTo(url as string, body, { authorization: `Bearer ${key}`, accept: 'application/json' }).then(
        ({ status, body }) => ({ status, body }),
      );
    expect(await post({ extensions })).toEqual({
      status: 200,
      body: {
        errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }],
      },
    });
    const registered = await post({ query, extensions });
    expect(registered.body.data.pets).toHaveLength(2);
    expect(await post({ extensions })).toEqual(registered);
  });

  it('with PERSISTED_OPERATIONS=require serves no GraphiQL and registers nothing', async () => {
    const upstream = await startFakeUpstream();
    try {
      const gateway = start({
        PORT: '0',
        HOST: '127.0.0.1',
        UPSTREAM_URL: upstream.url,
        PERSISTED_OPERATIONS: 'require',
        PERSISTED_OPERATIONS_FILE: 'test/generated/persisted-documents.json',
        LOG_LEVEL: 'silent',
      });
      const [, url] = await gateway.waitFor(/GraphQL at (http:\/\/\S+\/graphql)/);
      await gateway.waitFor(/pet-gateway: upstream /);
      expect(gateway.output()).not.toContain('GraphiQL');
      const page = await fetch(url as string, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(406);
      const query = '{ pets(limit: 1) { id } }';
      const sha256Hash = createHash('sha256').update(query).digest('hex');
      const refused = await postJson(url as string, {
        query,
        extensions: { persistedQuery: { version: 1, sha256Hash } },
      });
      expect(refused.errors?.[0]?.extensions?.code).toBe('PERSISTED_OPERATION_REQUIRED');
    } finally {
      await upstream.close();
    }
  });

  describe('stops with one line and exit code 1 when it cannot start', () => {
    /** Runs the gateway to its exit; returns its code and what it printed. */
    async function failing(env: Record<string, string>) {
      const gateway = start({ UPSTREAM_URL: 'http://127.0.0.1:9/v1', LOG_LEVEL: 'silent', ...env });
      const [code] = await once(gateway.child, 'exit');
      return { code, output: gateway.output().trim() };
    }

    it('the port is taken', async () => {
      const taken = createServer();
      taken.listen(0, '127.0.0.1');
      await once(taken, 'listening');
      const { port } = taken.address() as AddressInfo;
      try {
        const { code, output } = await failing({ PORT: String(port), HOST: '127.0.0.1' });
        expect(code).toBe(1);
        expect(output).toBe(
          `pet-gateway: port ${port} on 127.0.0.1 is already in use: stop what is listening there, or set PORT to another port (PORT=0 picks a free one)`,
        );
      } finally {
        taken.close();
      }
    });

    it.each([
      ['192.0.2.1', 'HOST 192.0.2.1 is not an address of this machine'],
      ['no-such-host.invalid', 'HOST "no-such-host.invalid" does not resolve to an address'],
    ])('HOST=%s', async (host, message) => {
      const { code, output } = await failing({ PORT: '0', HOST: host });
      expect(code).toBe(1);
      expect(output.split('\n')).toHaveLength(1);
      expect(output).toContain(`pet-gateway: ${message}`);
    });

    const scratch = mkdtempSync(join(tmpdir(), 'pet-gateway-'));
    const aFile = join(scratch, 'not-a-directory');
    writeFileSync(aFile, '');
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));
    it.each([
      ['a directory', tmpdir(), 'unable to open database file'],
      ['a path under a file', `${aFile}/petstore.db`, 'a file stands where its directory should be'],
      // Node's recursive mkdirSync never returns under /proc (#44 item 2): the start must still fail at once.
      ['a path under /proc', '/proc/nope/x.db', 'its directory cannot be made there'],
    ])('PETSTORE_DB is %s', async (_name, path, reason) => {
      const gateway = start({ PORT: '0', HOST: '127.0.0.1', PETSTORE_DB: path });
      const [code] = await once(gateway.child, 'exit');
      expect(code).toBe(1);
      expect(gateway.output().trim()).toBe(
        `pet-gateway: PETSTORE_DB "${path}" cannot be opened (${reason}): point it at a file in a writable directory, or use PETSTORE_DB=:memory:`,
      );
    });

    it('a privileged port (the message; the tests run as root, where binding succeeds)', () => {
      const error = Object.assign(new Error('listen EACCES'), { code: 'EACCES' });
      expect(listenError(error, 80, '0.0.0.0').message).toBe(
        'not allowed to listen on port 80: ports below 1024 need privileges, so set PORT to 1024 or above (e.g. PORT=4000)',
      );
    });
  });

  it('stops at once with a one-line message on bad configuration', async () => {
    const gateway = start({ UPSTREAM_URL: 'https://example.com/v2' });
    const [code] = await once(gateway.child, 'exit');
    expect(code).toBe(1);
    expect(gateway.output().trim()).toBe('pet-gateway: UPSTREAM_URL path must end in /v1, got "/v2"');
  });
});
