// @tier slow: npm start with WORKERS=2

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, startSlowListUpstream } from '../support/fake-upstream.ts';
import { killSpawned, startMain } from '../support/process.ts';
import { subscribeSse } from '../support/sse.ts';

// WORKERS=2 against a spawned `node src/main.ts`, as `npm start` runs it. Which worker answered
// is never visible in a response, so the tests look where an operator would: the process tree
// (/proc), the CPU time each worker spent, and the aggregated /metrics.

afterEach(killSpawned);

const start = (env: Record<string, string>) =>
  startMain({ PORT: '0', HOST: '127.0.0.1', WORKERS: '2', ...env });

/** The primary's children, as the kernel lists them. */
function childPids(pid: number): number[] {
  const listed = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return listed === '' ? [] : listed.split(' ').map(Number);
}

/** User + system CPU ticks a process has used. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** One POST on its own connection: the primary hands each new connection to the next worker. */
function post(url: string, body: unknown, authorization: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', authorization },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function counted(metrics: string, series: string): number {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('WORKERS=2', { timeout: 60_000 }, () => {
  it('runs one embedded store for both workers, both serve the port, and /metrics sums them', async () => {
    const gateway = start({ PETSTORE_DB: ':memory:', LOG_LEVEL: 'silent' });
    const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
    const [, key] = await gateway.waitFor(/API key for this run: (\S+)/);
    const [, pids] = await gateway.waitFor(/2 workers \(pids (\d+), (\d+)\)/).then((m) => [m[0], m.slice(1)]);
    const workers = (pids as string[]).map(Number);
    const primary = gateway.child.pid as number;
    expect(childPids(primary).sort()).toEqual([...workers].sort());
    // One reference service, in the primary: its announcement and key are printed once.
    expect(gateway.output().match(/serving the reference animal store/g)).toHaveLength(1);
    expect(gateway.output().match(/API key for this run/g)).toHaveLength(1);

    const before = workers.map(cpuTicks);
    const requests = 120;
    for (let i = 0; i < requests; i += 10) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          post(url as string, { query: 'query Spread { pets(limit: 20) { id name } }' }, `Bearer ${key}`),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body).data.pets).toHaveLength(20);
      }
    }
    // Each worker answered its share: 60 operations are several 10 ms ticks of CPU each.
    const spent = workers.map((pid, i) => cpuTicks(pid) - (before[i] as number));
    for (const ticks of spent) expect(ticks).toBeGreaterThanOrEqual(3);

    // Whichever worker a scrape reaches, it reports the whole tree.
    for (let scrape = 0; scrape < 4; scrape++) {
      const metrics = await (
        await fetch(new URL('/metrics', url), { headers: { connection: 'close' } })
      ).text();
      expect(
        counted(metrics, 'pet_gateway_operations_total{operationName="Spread",operationType="query"}'),
      ).toBe(requests);
      expect(counted(metrics, 'pet_gateway_upstream_breaker_state')).toBe(0);
    }

    gateway.child.kill('SIGTERM');
    const [code] = await once(gateway.child, 'exit');
    expect(code).toBe(0);
  });

  it('wakes a caller’s live lists on every worker when it creates a pet through any of them', async () => {
    // A poll a minute: a list that sees the create within a second was woken, not polled.
    const gateway = start({ PETSTORE_DB: ':memory:', LOG_LEVEL: 'silent', LIVE_POLL_MS: '60000' });
    const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
    const [, key] = await gateway.waitFor(/API key for this run: (\S+)/);
    const authorization = `Bearer ${key}`;
    // Each subscription on a connection of its own: the primary hands them to the workers in turn.
    const lists = await Promise.all(
      Array.from({ length: 4 }, () =>
        subscribeSse(
          url as string,
          { query: 'subscription { pets(limit: 100, status: PENDING) { name } }' },
          authorization,
        ),
      ),
    );
    try {
      for (const list of lists) await list.waitForEvents(1);
      for (let create = 1; create <= 2; create++) {
        const answer = await post(
          url as string,
          {
            query: `mutation { createPet(input: { name: "Woken ${create}", categoryId: "1", status: PENDING }) { id } }`,
          },
          authorization,
        );
        expect(answer.status).toBe(200);
        for (const list of lists) {
          await list.waitForEvents(create + 1, 1000);
          const last = list.events.at(-1)?.data as { pets?: Array<{ name: string }> } | undefined;
          const names = (last?.pets ?? []).map((pet) => pet.name);
          expect(names).toContain(`Woken ${create}`);
        }
      }
    } finally {
      for (const list of lists) list.close();
    }
  });

  it('starts a new worker in place of one that dies, and the port keeps answering', async () => {
    const upstream = await startFakeUpstream();
    upstream.tokens.add('t');
    try {
      const gateway = start({ UPSTREAM_URL: upstream.url, LOG_LEVEL: 'silent' });
      const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
      const match = await gateway.waitFor(/2 workers \(pids (\d+), (\d+)\)/);
      const victim = Number(match[1]);
      const survivor = Number(match[2]);
      process.kill(victim, 'SIGKILL');
      await gateway.waitFor(new RegExp(`worker ${victim} exited \\(SIGKILL\\), starting another in \\d+ ms`));
      // Meanwhile the survivor answers every connection.
      for (let i = 0; i < 10; i++) {
        const answer = await post(url as string, { query: '{ pets { id } }' }, 'Bearer t');
        expect(answer.status).toBe(200);
      }
      const [, replacement] = await gateway.waitFor(/worker (\d+) listening/);
      const now = childPids(gateway.child.pid as number);
      expect(now).toHaveLength(2);
      expect(now).toContain(survivor);
      expect(now).toContain(Number(replacement));
      expect(now).not.toContain(victim);
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => post(url as string, { query: '{ pets { id } }' }, 'Bearer t')),
      );
      for (const answer of answers) expect(answer.status).toBe(200);

      gateway.child.kill('SIGTERM');
      const [code] = await once(gateway.child, 'exit');
      expect(code).toBe(0);
    } finally {
      await upstream.close();
    }
  });

  it('on SIGTERM lets every worker finish its in-flight operations, then exits 0', async () => {
    const upstream = await startSlowListUpstream();
    try {
      const gateway = start({ UPSTREAM_URL: upstream.url, LOG_LEVEL: 'silent' });
      const [, url] = await gateway.waitFor(/GraphiQL at (http:\/\/\S+\/graphql)/);
      await gateway.waitFor(/2 workers/);
      // Six different lists: identical ones of one caller would be coalesced into one upstream call.
      const inFlight = Array.from({ length: 6 }, (_, i) =>
        post(url as string, { query: `{ pets(limit: ${i + 1}) { name } }` }, 'Bearer t'),
      );
      while (upstream.requests.length < 6) await new Promise((resolve) => setTimeout(resolve, 10));

      const exited = once(gateway.child, 'exit');
      gateway.child.kill('SIGTERM');
      for (const answer of await Promise.all(inFlight)) {
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body).data.pets).toEqual([{ name: 'Slow' }]);
      }
      const [code] = await exited;
      expect(code).toBe(0);
      expect(gateway.output()).toMatch(/SIGTERM, finishing in-flight requests in 2 workers/);
    } finally {
      await upstream.close();
    }
  });

  it('a port already in use stops start-up with one line, printed once, and exit code 1', async () => {
    const first = start({ PETSTORE_DB: ':memory:', LOG_LEVEL: 'silent', WORKERS: '1' });
    const [, port] = await first.waitFor(/at http:\/\/127\.0\.0\.1:(\d+)\/graphql/);
    const second = start({ PETSTORE_DB: ':memory:', LOG_LEVEL: 'silent', PORT: port as string });
    const [code] = await once(second.child, 'exit');
    expect(code).toBe(1);
    expect(second.output().match(/is already in use/g)).toHaveLength(1);
    expect(second.output()).toMatch(/^pet-gateway: port \d+ on 127\.0\.0\.1 is already in use/);
  });
});
