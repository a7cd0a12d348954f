import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { AFTER_MS } from './chaos.ts';
import { sample } from './metrics-text.ts';
import { collectGarbage, type Started, startCommand, startNode } from './processes.ts';
import {
  checkStored,
  createDirect,
  createKeys,
  createSender,
  freePort,
  type Key,
  lowestMemory,
  memoryProof,
  type Op,
  type Proof,
  sleep,
  traffic,
} from './traffic.ts';

export interface ClusterChaosOptions {
  /** Seconds of traffic; the faults take about 20 s, the rest is quiet. @default 40 */
  durationSeconds?: number;
  /** @default 200 */
  keys?: number;
  /** Requests in flight at once, through the load balancer. @default 16 */
  concurrency?: number;
  /** Gateway instances behind nginx. @default 2 */
  instances?: number;
  /** How long Redis stays frozen (SIGSTOP) and, later, dead (SIGKILL). @default 4000 */
  redisDownMs?: number;
  /** How long "after" is watched for memory. @default AFTER_MS (12 s) */
  afterMs?: number;
  log?: (line: string) => void;
}

export interface ClusterChaosReport {
  proofs: Proof[];
  outcomes: Map<string, number>;
  requests: number;
  keysUsed: number;
  instances: number;
  /** What was done to which process, in order, with the time into the run. */
  events: string[];
  seconds: number;
}

/** Runs traffic until `done` settles (the faults outlasted the planned duration); requests sent. */
async function trafficUntil(
  done: Promise<unknown>,
  keys: Key[],
  concurrency: number,
  send: Parameters<typeof traffic>[3],
  run: string,
): Promise<number> {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  let sent = 0;
  while (!finished) sent += await traffic(keys, concurrency, 500, send, run, true, OPS);
  await done;
  return sent;
}

/** The single run's mix, one list in seven sent as an APQ hash (the store is in Redis, shared). */
const OPS: Op[] = ['list', 'pet', 'create', 'apq', 'pet', 'create', 'list'];

/** Debian's programs, installed by .ci/run. */
const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';
const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx';

/**
 * Requests per key per minute: far above what the traffic sends per key, reached on purpose by
 * one key after Redis is back, to see the limit shared again.
 */
const RATE_LIMIT = 400;
/**
 * Requests that started this soon after Redis stopped may pay the breaker's one 250 ms timeout
 * (those in flight when it froze): the latency proof is about what follows.
 */
const BREAKER_TRIP_MS = 500;

/**
 * Two or more gateway instances (`node src/main.ts`) behind nginx (deploy/nginx.conf, pointed at
 * them), sharing one redis-server for the response cache, the rate limit and the APQ store, in front of the
 * reference service. Under traffic through nginx: one instance is SIGKILLed and restarted; Redis
 * is frozen (SIGSTOP) and let go, then killed and restarted empty; the reference service is killed
 * and restarted. Then the proofs of `npm run chaos`, and: the shared limit holds again once Redis
 * is back, and p99 latency while Redis is down stays within 2× of healthy.
 */
export async function runClusterChaos(options: ClusterChaosOptions = {}): Promise<ClusterChaosReport> {
  for (const program of [REDIS_SERVER, NGINX]) {
    if (!existsSync(program))
      throw new Error(`${program} not found: .ci/run installs redis-server and nginx`);
  }
  const durationMs = (options.durationSeconds ?? 40) * 1000;
  const keyCount = options.keys ?? 200;
  const concurrency = options.concurrency ?? 16;
  const instanceCount = Math.max(2, options.instances ?? 2);
  const afterMs = options.afterMs ?? AFTER_MS;
  const redisDownMs = options.redisDownMs ?? 4_000;
  const log = options.log ?? (() => {});
  const started = Date.now();
  const run = randomBytes(3).toString('hex');
  // One REDIS_KEY_SECRET for every instance, as an operator sets it: they share counts and entries.
  const redisKeySecret = randomBytes(32).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-cluster-'));
  // nginx's workers run as an unprivileged user when it is started as root.
  chmodSync(dir, 0o755);
  const dbPath = join(dir, 'petstore.db');
  const processes: Started[] = [];
  const events: string[] = [];

  const keys = createKeys(dbPath, keyCount, run);
  const [limitKey] = createKeys(dbPath, 1, run, 'limit');
  log(`created ${keyCount} keys in ${dbPath}`);

  const [redisPort, petstorePort, nginxPort] = [await freePort(), await freePort(), await freePort()];
  const gatewayPorts: number[] = [];
  for (let i = 0; i < instanceCount; i++) gatewayPorts.push(await freePort());

  const startRedis = async () => {
    const redis = startCommand(
      REDIS_SERVER,
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {},
      'redis-server',
    );
    processes.push(redis);
    await redis.waitFor(/Ready to accept connections/);
    return redis;
  };
  const startPetstore = async () => {
    const petstore = startNode('src/petstore/main.ts', {
      PORT: String(petstorePort),
      HOST: '127.0.0.1',
      PETSTORE_DB: dbPath,
    });
    processes.push(petstore);
    await petstore.waitFor(/petstore listening on/);
    return petstore;
  };
  const startGatewayInstance = async (port: number) => {
    // The inspector, on a loopback port of its own, only so the run can collect garbage before it
    // reads memory (see collectGarbage).
    const gateway = startCommand(
      process.execPath,
      ['--inspect=127.0.0.1:0', 'src/main.ts'],
      {
        PORT: String(port),
        HOST: '127.0.0.1',
        UPSTREAM_URL: `http://127.0.0.1:${petstorePort}/v1`,
        LOG_LEVEL: 'warn',
        RESPONSE_CACHE: 'redis',
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        REDIS_KEY_SECRET: redisKeySecret,
        RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
        RATE_LIMIT_STORE: 'redis',
        APQ_STORE: 'redis',
        // nginx in front: the refused-keys bound and the log line see each caller, not nginx. Every
        // key here is real, so none spends that bound, however many each instance meets as new.
        TRUSTED_PROXIES: '127.0.0.1',
      },
      'src/main.ts',
    );
    processes.push(gateway);
    await gateway.waitFor(/ at http:\/\/\S+\/graphql/);
    return gateway;
  };

  let redis = await startRedis();
  let petstore = await startPetstore();
  const gateways: Started[] = [];
  for (const port of gatewayPorts) gateways.push(await startGatewayInstance(port));
  const nginx = startNginx(dir, nginxPort, gatewayPorts);
  processes.push(nginx);
  const rest = new Pool(`http://127.0.0.1:${petstorePort}`, { connections: 16 });
  const balancer = new Pool(`http://127.0.0.1:${nginxPort}`, { connections: concurrency + 2 });
  // The instance never killed: its memory is watched, and its breaker and Redis state read directly.
  const steady = new Pool(`http://127.0.0.1:${gatewayPorts[1]}`, { connections: 2 });

  try {
    await waitUntil('nginx answers', async () => (await get(balancer, '/health')).status === 200);
    await waitUntil('every instance has Redis', async () =>
      (await redisStates(gatewayPorts)).every((s) => s === 'up'),
    );
    // Each key from an address of its own (198.18.0.0/15, for benchmarks), unknown keys all from
    // one: one junk flood, and a crowd it must not hold back (the refused-keys bound is per address).
    const addresses = new Map(keys.map((key, i) => [key, `198.18.${i >> 8}.${i & 255}`]));
    const { send, tally } = createSender(balancer, run, {
      balancer: true,
      forwardedFor: (key) => (key ? (addresses.get(key) ?? '198.19.0.1') : '203.0.113.66'),
    });
    const memory = async () => {
      const text = (await get(steady, '/metrics')).text;
      return {
        heap: sample(text, 'pet_gateway_nodejs_heap_size_used_bytes') ?? 0,
        rss: sample(text, 'pet_gateway_process_resident_memory_bytes') ?? 0,
      };
    };

    const startSentinel = await createDirect(rest, keys[0] as Key, `chaos-${run}-sentinel-start`);
    log(`${instanceCount} gateways behind nginx at http://127.0.0.1:${nginxPort}, warming up`);
    await traffic(keys, 4, 1_500, send, run, false, OPS);
    const before = await lowestMemory(memory, 1_000, () => traffic(keys, 2, 1_000, send, run, false, OPS));

    const runStart = Date.now();
    const at = () => `${((Date.now() - runStart) / 1000).toFixed(1)} s`;
    const event = (line: string) => {
      events.push(`${at()}: ${line}`);
      log(line);
    };
    /** [from, to) in ms since the epoch. */
    const healthy: Array<[number, number]> = [];
    const redisDown: Array<[number, number]> = [];
    const gatewayKills: number[] = [];
    log(`running ${durationMs / 1000} s of traffic with ${keyCount} keys through nginx`);
    const monkey = (async () => {
      await sleep(2_000);
      healthy.push([runStart, Date.now()]);
      // One gateway instance dies outright (nginx sends its traffic to the others meanwhile), and
      // so does the reference service: both breakers open.
      await Promise.all([(gateways[0] as Started).stop('SIGKILL'), petstore.stop('SIGKILL')]);
      gatewayKills.push(Date.now());
      event('gateway 1 and the reference service SIGKILLed');
      await sleep(1_500);
      [gateways[0], petstore] = await Promise.all([
        startGatewayInstance(gatewayPorts[0] as number),
        startPetstore(),
      ]);
      event('gateway 1 and the reference service restarted');
      // Redis is measured with the upstream healthy: the breakers' 5 s open, then their probe.
      await waitUntil('breakers closed', async () => {
        await send(keys[0], 'list', (keys[0] as Key).authorization);
        const texts = await Promise.all(gatewayPorts.map((port) => scrape(port)));
        return texts.every((text) => sample(text, 'pet_gateway_upstream_breaker_state') === 0);
      });
      event('both breakers closed');

      const frozenAt = Date.now();
      redis.child.kill('SIGSTOP');
      event('Redis frozen (SIGSTOP)');
      await sleep(redisDownMs);
      redis.child.kill('SIGCONT');
      redisDown.push([frozenAt + BREAKER_TRIP_MS, Date.now()]);
      event('Redis resumed (SIGCONT)');
      await waitUntil('Redis up again', async () =>
        (await redisStates(gatewayPorts)).every((s) => s === 'up'),
      );
      event('every instance shares Redis again');

      const killedAt = Date.now();
      await redis.stop('SIGKILL');
      event('Redis SIGKILLed');
      await sleep(redisDownMs);
      redisDown.push([killedAt + BREAKER_TRIP_MS, Date.now()]);
      redis = await startRedis();
      event('Redis restarted (empty)');
      await waitUntil('Redis up again', async () =>
        (await redisStates(gatewayPorts)).every((s) => s === 'up'),
      );
      event('every instance shares Redis again');
      const quietFrom = Date.now();
      await sleep(Math.max(1_500, runStart + durationMs - Date.now()));
      healthy.push([quietFrom, Date.now()]);
    })();
    // Traffic lasts at least as long as the faults.
    const requests = await traffic(keys, concurrency, durationMs, send, run, true, OPS);
    const more = await trafficUntil(monkey, keys, concurrency, send, run);
    await monkey;

    // Settle: every breaker closed.
    let breakerTexts: string[] = [];
    for (const until = Date.now() + 15_000; Date.now() < until; ) {
      await send(keys[0], 'list', (keys[0] as Key).authorization);
      breakerTexts = await Promise.all(gatewayPorts.map((port) => scrape(port)));
      if (breakerTexts.every((text) => sample(text, 'pet_gateway_upstream_breaker_state') === 0)) break;
      await sleep(250);
    }

    // The shared limit, with Redis back: one fresh key, RATE_LIMIT + 1 requests round-robin over
    // the instances. Per instance (Redis unused) each would allow RATE_LIMIT of them.
    const limitStatuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next++ < RATE_LIMIT + 1) {
          const { status } = await postGraphql(
            balancer,
            (limitKey as Key).authorization,
            '{ __typename }',
            '198.19.0.2',
          );
          limitStatuses.set(status, (limitStatuses.get(status) ?? 0) + 1);
        }
      }),
    );

    // V8 collects the old generation when it sees fit, which an idle instance behind a load
    // balancer may put off for longer than the run waits: collect first, then watch.
    await collectGarbage(gateways[1] as Started);
    const after = await lowestMemory(memory, afterMs, () => sleep(afterMs));
    const endSentinel = await createDirect(rest, keys[0] as Key, `chaos-${run}-sentinel-end`);
    log(`reading pets ${startSentinel + 1n}..${endSentinel - 1n} through REST`);
    const { outcomes, failures, checked } = tally;
    const { stored, acknowledged, unacknowledgedStored } = await checkStored(
      rest,
      keys,
      run,
      startSentinel,
      endSentinel,
      failures,
    );

    const transitions = (state: string) =>
      breakerTexts.reduce(
        (sum, text) =>
          sum + (sample(text, 'pet_gateway_upstream_breaker_transitions_total', `state="${state}"`) ?? 0),
        0,
      );
    const breakersClosed = breakerTexts.every(
      (text) => sample(text, 'pet_gateway_upstream_breaker_state') === 0,
    );
    const answered = [...outcomes.values()].reduce((a, b) => a + b, 0);
    const examples = (list: string[]) => (list.length === 0 ? '' : `; e.g. ${list.slice(0, 3).join('; ')}`);
    const within = (windows: Array<[number, number]>) =>
      tally.latencies
        .filter(({ at }) => windows.some(([from, to]) => at >= from && at < to))
        .map(({ ms }) => ms);
    const healthyP99 = percentile(within(healthy), 0.99);
    const downP99 = percentile(within(redisDown), 0.99);
    // nginx's 502 is allowed only for requests sent before the kill or within a second of it (on
    // connections nginx still held to the dead instance, until it marks it failed): never later.
    const lateBalancerErrors = tally.balancerErrors.filter(
      (at) => !gatewayKills.some((killedAt) => at <= killedAt + 1_000),
    );

    const proofs: Proof[] = [
      {
        name: 'every answer: data or a documented code',
        passed: failures.undocumented.length === 0 && answered > 0 && lateBalancerErrors.length === 0,
        detail: `${answered} answers, ${failures.undocumented.length} without${examples(failures.undocumented)}; ${tally.balancerErrors.length} were nginx's 502 for requests sent to the SIGKILLed instance up to its kill (+1 s), ${lateBalancerErrors.length} later`,
      },
      {
        name: 'acknowledged creates stored exactly once',
        passed: failures.lost.length === 0 && acknowledged > 0,
        detail: `${acknowledged} acknowledged, ${stored.size} pets read back, ${unacknowledgedStored} stored without an acknowledgement${examples(failures.lost)}`,
      },
      {
        name: "no answer carried another key's data",
        passed: failures.leaks.length === 0,
        detail: `${checked.own} createPet/pet(id) answers carried their own key's names; ${checked.intruder} answers to unknown keys, ${failures.leaks.length} with data${examples(failures.leaks)}`,
      },
      {
        name: 'breakers opened and closed',
        passed: transitions('open') > 0 && transitions('closed') > 0 && breakersClosed,
        detail: `over ${instanceCount} instances: open ${transitions('open')}, half-open ${transitions('half-open')}, closed ${transitions('closed')}; now ${breakersClosed ? 'all closed' : 'not all closed'}`,
      },
      memoryProof(before, after),
      {
        name: 'shared rate limit holds after Redis returns',
        passed: limitStatuses.get(200) === RATE_LIMIT && limitStatuses.get(429) === 1,
        detail: `one key, ${RATE_LIMIT + 1} requests over ${instanceCount} instances (limit ${RATE_LIMIT}/min): ${[...limitStatuses].map(([status, n]) => `${n}× ${status}`).join(', ')}`,
      },
      {
        name: 'p99 while Redis is down ≤ 2× healthy',
        passed: healthyP99 > 0 && downP99 > 0 && downP99 <= 2 * healthyP99,
        detail: `p99 ${downP99.toFixed(1)} ms over ${within(redisDown).length} requests with Redis frozen or dead (from ${BREAKER_TRIP_MS} ms after it stopped: the breaker's one timeout), against ${healthyP99.toFixed(1)} ms over ${within(healthy).length} healthy ones`,
      },
    ];
    return {
      proofs,
      outcomes,
      requests: requests + more,
      keysUsed: keys.filter((key) => key.sent > 0).length,
      instances: instanceCount,
      events,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await balancer.close();
    await steady.close();
    await rest.close();
    await Promise.all(processes.map((child) => child.stop('SIGTERM')));
    rmSync(dir, { recursive: true, force: true });
  }

  async function scrape(port: number): Promise<string> {
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
    try {
      return (await get(pool, '/metrics')).text;
    } finally {
      await pool.close();
    }
  }
}

/** The cluster run's table, as `formatReport` prints the single-instance one. */
export function formatClusterReport(report: ClusterChaosReport): string {
  return [
    `cluster chaos run: ${report.requests} requests from ${report.keysUsed} keys through nginx to ${report.instances} gateway instances in ${report.seconds.toFixed(0)} s`,
    ...report.events.map((event) => `  ${event}`),
    '',
    '| proof | result | detail |',
    '| --- | --- | --- |',
    ...report.proofs.map(
      (proof) => `| ${proof.name} | ${proof.passed ? 'PASS' : 'FAIL'} | ${proof.detail} |`,
    ),
    '',
    `answers: ${[...report.outcomes]
      .sort((a, b) => b[1] - a[1])
      .map(([outcome, n]) => `${outcome} ${n}`)
      .join(', ')}`,
  ].join('\n');
}

/** nginx with deploy/nginx.conf, its upstream pointed at the instances, in the foreground. */
export function startNginx(dir: string, port: number, gatewayPorts: number[]): Started {
  const site = readFileSync(new URL('../deploy/nginx.conf', import.meta.url), 'utf8')
    // Each instance gets the line deploy/nginx.conf gives `gateway:4000`, its parameters kept.
    .replace(/server gateway:4000([^;]*);/, (_, parameters: string) =>
      gatewayPorts.map((p) => `server 127.0.0.1:${p}${parameters};`).join('\n  '),
    )
    .replace('listen 4000;', `listen 127.0.0.1:${port};`);
  if (!site.includes(`127.0.0.1:${gatewayPorts[0]}`))
    throw new Error('deploy/nginx.conf: no "server gateway:4000…;" to point');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
    (name) => `${name}_temp_path ${dir};`,
  );
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/nginx-error.log;`,
      'events { worker_connections 1024; }',
      'http {',
      'access_log off;',
      ...temp,
      site,
      '}',
    ].join('\n'),
  );
  return startCommand(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], {}, 'nginx');
}

async function get(pool: Pool, path: string): Promise<{ status: number; text: string }> {
  const { statusCode, body } = await pool.request({ path, method: 'GET' });
  return { status: statusCode, text: await body.text() };
}

async function postGraphql(pool: Pool, authorization: string, query: string, forwardedFor: string) {
  const { statusCode, body } = await pool.request({
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization, 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({ query }),
  });
  await body.dump();
  return { status: statusCode };
}

/** Each instance's Redis state, as its /health says it. */
async function redisStates(ports: number[]): Promise<Array<string | undefined>> {
  return Promise.all(
    ports.map(async (port) => {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/health`);
        return ((await response.json()) as { redis?: string }).redis;
      } catch {
        return undefined;
      }
    }),
  );
}

async function waitUntil(what: string, condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
    if (await condition().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`chaos: never ${what} within ${timeoutMs / 1000} s`);
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}
