import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { AFTER_MS, memoryIn } from './chaos.ts';
import { NGINX, startNginx } from './nginx.ts';
import { breakersClosed, get, postGraphql, redisStates, scrape, waitUntil } from './probes.ts';
import { collectGarbage, type Started, startCommand, startNode } from './processes.ts';
import {
  BREAKER_TRIP_MS,
  clusterProofs,
  type Faults,
  memoryProof,
  type Proof,
  RATE_LIMIT,
  redisProofs,
} from './proofs.ts';
import {
  checkStored,
  createDirect,
  createKeys,
  createSender,
  freePort,
  type Key,
  lowestMemory,
  type Op,
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

/** Debian's redis-server, installed by .ci/run. */
const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';

/** The cluster's processes, each restartable on its own port. */
interface Cluster {
  dir: string;
  dbPath: string;
  ports: { redis: number; petstore: number; nginx: number; gateways: number[] };
  /** Every process started, restarted ones included: all are stopped at the end. */
  processes: Started[];
  redis: Started;
  petstore: Started;
  gateways: Started[];
  startRedis(): Promise<Started>;
  startPetstore(): Promise<Started>;
  startGateway(port: number): Promise<Started>;
}

/** Redis, the reference service, `instances` gateways sharing them and nginx in front, started in that order. */
async function startCluster(dir: string, dbPath: string, instances: number): Promise<Cluster> {
  const [redis, petstore, nginx] = [await freePort(), await freePort(), await freePort()];
  const gateways: number[] = [];
  for (let i = 0; i < instances; i++) gateways.push(await freePort());
  // One REDIS_KEY_SECRET for every instance, as an operator sets it: they share counts and entries.
  const redisKeySecret = randomBytes(32).toString('hex');
  const processes: Started[] = [];
  const started = async (process: Started, ready: RegExp) => {
    processes.push(process);
    await process.waitFor(ready);
    return process;
  };
  const startRedis = () =>
    started(
      startCommand(
        REDIS_SERVER,
        ['--port', String(redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {},
        'redis-server',
      ),
      /Ready to accept connections/,
    );
  const startPetstore = () =>
    started(
      startNode('src/petstore/main.ts', { PORT: String(petstore), HOST: '127.0.0.1', PETSTORE_DB: dbPath }),
      /petstore listening on/,
    );
  // The inspector, on a loopback port of its own, only so the run can collect garbage before it
  // reads memory (see collectGarbage).
  const startGateway = (port: number) =>
    started(
      startCommand(
        process.execPath,
        ['--inspect=127.0.0.1:0', 'src/main.ts'],
        {
          PORT: String(port),
          HOST: '127.0.0.1',
          UPSTREAM_URL: `http://127.0.0.1:${petstore}/v1`,
          LOG_LEVEL: 'warn',
          RESPONSE_CACHE: 'redis',
          REDIS_URL: `redis://127.0.0.1:${redis}`,
          REDIS_KEY_SECRET: redisKeySecret,
          RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
          RATE_LIMIT_STORE: 'redis',
          APQ_STORE: 'redis',
          // nginx in front: the refused-keys bound and the log line see each caller, not nginx. Every
          // key here is real, so none spends that bound, however many each instance meets as new.
          TRUSTED_PROXIES: '127.0.0.1',
        },
        'src/main.ts',
      ),
      / at http:\/\/\S+\/graphql/,
    );
  const cluster: Cluster = {
    dir,
    dbPath,
    ports: { redis, petstore, nginx, gateways },
    processes,
    redis: await startRedis(),
    petstore: await startPetstore(),
    gateways: [],
    startRedis,
    startPetstore,
    startGateway,
  };
  for (const port of gateways) cluster.gateways.push(await startGateway(port));
  processes.push(startNginx(dir, nginx, gateways));
  return cluster;
}

/**
 * The faults, in order, under the traffic `send` drives: gateway 1 and the reference service
 * SIGKILLed and restarted; Redis frozen and let go, then killed and restarted empty; then quiet
 * until `durationMs` from `runStart`. `event` notes each step.
 */
async function runFaults(
  cluster: Cluster,
  options: { runStart: number; durationMs: number; redisDownMs: number },
  probe: () => Promise<unknown>,
  event: (line: string) => void,
): Promise<Faults> {
  const { runStart, durationMs, redisDownMs } = options;
  const faults: Faults = { healthy: [], redisDown: [], gatewayKills: [] };
  const ports = cluster.ports.gateways;
  const redisShared = async (what: string) => {
    await waitUntil('Redis up again', async () => (await redisStates(ports)).every((s) => s === 'up'));
    event(what);
  };
  await sleep(2_000);
  faults.healthy.push([runStart, Date.now()]);
  // One gateway instance dies outright (nginx sends its traffic to the others meanwhile), and so
  // does the reference service: both breakers open.
  await Promise.all([(cluster.gateways[0] as Started).stop('SIGKILL'), cluster.petstore.stop('SIGKILL')]);
  faults.gatewayKills.push(Date.now());
  event('gateway 1 and the reference service SIGKILLed');
  await sleep(1_500);
  [cluster.gateways[0], cluster.petstore] = await Promise.all([
    cluster.startGateway(ports[0] as number),
    cluster.startPetstore(),
  ]);
  event('gateway 1 and the reference service restarted');
  // Redis is measured with the upstream healthy: the breakers' 5 s open, then their probe.
  await waitUntil('breakers closed', async () => {
    await probe();
    return breakersClosed(await Promise.all(ports.map((port) => scrape(port))));
  });
  event('both breakers closed');

  const frozenAt = Date.now();
  cluster.redis.child.kill('SIGSTOP');
  event('Redis frozen (SIGSTOP)');
  await sleep(redisDownMs);
  cluster.redis.child.kill('SIGCONT');
  faults.redisDown.push([frozenAt + BREAKER_TRIP_MS, Date.now()]);
  event('Redis resumed (SIGCONT)');
  await redisShared('every instance shares Redis again');

  const killedAt = Date.now();
  await cluster.redis.stop('SIGKILL');
  event('Redis SIGKILLed');
  await sleep(redisDownMs);
  faults.redisDown.push([killedAt + BREAKER_TRIP_MS, Date.now()]);
  cluster.redis = await cluster.startRedis();
  event('Redis restarted (empty)');
  await redisShared('every instance shares Redis again');
  const quietFrom = Date.now();
  await sleep(Math.max(1_500, runStart + durationMs - Date.now()));
  faults.healthy.push([quietFrom, Date.now()]);
  return faults;
}

/** One fresh key, RATE_LIMIT + 1 requests round-robin over the instances: statuses counted. */
async function spendLimit(balancer: Pool, key: Key): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next++ < RATE_LIMIT + 1) {
        const { status } = await postGraphql(balancer, key.authorization, '{ __typename }', '198.19.0.2');
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  return statuses;
}

/** The programs the cluster run starts besides Node: fails at once when one is missing. */
function requirePrograms(): void {
  for (const program of [REDIS_SERVER, NGINX]) {
    if (!existsSync(program))
      throw new Error(`${program} not found: .ci/run installs redis-server and nginx`);
  }
}

/** A directory of the run's own, the reference service's database in it, and the keys created there. */
function prepareRun(keyCount: number, run: string) {
  const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-cluster-'));
  // nginx's workers run as an unprivileged user when it is started as root.
  chmodSync(dir, 0o755);
  const dbPath = join(dir, 'petstore.db');
  const keys = createKeys(dbPath, keyCount, run);
  const [limitKey] = createKeys(dbPath, 1, run, 'limit');
  return { dir, dbPath, keys, limitKey: limitKey as Key };
}

/**
 * A sender through nginx. Each key sends from an address of its own (198.18.0.0/15, for
 * benchmarks), unknown keys all from one: one junk flood, and a crowd it must not hold back (the
 * refused-keys bound is per address).
 */
function balancedSender(balancer: Pool, keys: Key[], run: string) {
  const addresses = new Map(keys.map((key, i) => [key, `198.18.${i >> 8}.${i & 255}`]));
  return createSender(balancer, run, {
    balancer: true,
    forwardedFor: (key) => (key ? (addresses.get(key) ?? '198.19.0.1') : '203.0.113.66'),
  });
}

/** Probes until every instance's breaker reads closed, for 15 s at most: their last /metrics texts. */
async function settleBreakers(probe: () => Promise<unknown>, ports: number[]): Promise<string[]> {
  let breakerTexts: string[] = [];
  for (const until = Date.now() + 15_000; Date.now() < until; ) {
    await probe();
    breakerTexts = await Promise.all(ports.map((port) => scrape(port)));
    if (breakersClosed(breakerTexts)) break;
    await sleep(250);
  }
  return breakerTexts;
}

/**
 * Two or more gateway instances (`node src/main.ts`) behind nginx (deploy/nginx.conf, pointed at
 * them), sharing one redis-server for the response cache, the rate limit and the APQ store, in front
 * of the reference service. Under traffic through nginx: one instance is SIGKILLed and restarted;
 * Redis is frozen (SIGSTOP) and let go, then killed and restarted empty; the reference service is
 * killed and restarted. Then the proofs of `npm run chaos`, and: the shared limit holds again once
 * Redis is back, and p99 latency while Redis is down stays within 2× of healthy.
 */
export async function runClusterChaos(options: ClusterChaosOptions = {}): Promise<ClusterChaosReport> {
  requirePrograms();
  const durationMs = (options.durationSeconds ?? 40) * 1000;
  const keyCount = options.keys ?? 200;
  const concurrency = options.concurrency ?? 16;
  const instances = Math.max(2, options.instances ?? 2);
  const afterMs = options.afterMs ?? AFTER_MS;
  const log = options.log ?? (() => {});
  const started = Date.now();
  const run = randomBytes(3).toString('hex');
  const { dir, dbPath, keys, limitKey } = prepareRun(keyCount, run);
  const firstKey = keys[0] as Key;
  const events: string[] = [];
  log(`created ${keyCount} keys in ${dbPath}`);

  const cluster = await startCluster(dir, dbPath, instances);
  const { ports } = cluster;
  const rest = new Pool(`http://127.0.0.1:${ports.petstore}`, { connections: 16 });
  const balancer = new Pool(`http://127.0.0.1:${ports.nginx}`, { connections: concurrency + 2 });
  // The instance never killed: its memory is watched, and its breaker and Redis state read directly.
  const steady = new Pool(`http://127.0.0.1:${ports.gateways[1]}`, { connections: 2 });
  try {
    await waitUntil('nginx answers', async () => (await get(balancer, '/health')).status === 200);
    await waitUntil('every instance has Redis', async () =>
      (await redisStates(ports.gateways)).every((s) => s === 'up'),
    );
    const { send, tally } = balancedSender(balancer, keys, run);
    const memory = async () => memoryIn((await get(steady, '/metrics')).text);
    const probe = () => send(firstKey, 'list', firstKey.authorization);

    const startSentinel = await createDirect(rest, firstKey, `chaos-${run}-sentinel-start`);
    log(`${instances} gateways behind nginx at http://127.0.0.1:${ports.nginx}, warming up`);
    await traffic(keys, 4, 1_500, send, run, false, OPS);
    const before = await lowestMemory(memory, 1_000, () => traffic(keys, 2, 1_000, send, run, false, OPS));

    const runStart = Date.now();
    log(`running ${durationMs / 1000} s of traffic with ${keyCount} keys through nginx`);
    const event = (line: string) => {
      events.push(`${((Date.now() - runStart) / 1000).toFixed(1)} s: ${line}`);
      log(line);
    };
    const redisDownMs = options.redisDownMs ?? 4_000;
    const faults = runFaults(cluster, { runStart, durationMs, redisDownMs }, probe, event);
    // Traffic lasts at least as long as the faults.
    const requests = await traffic(keys, concurrency, durationMs, send, run, true, OPS);
    const more = await trafficUntil(faults, keys, concurrency, send, run);

    const breakerTexts = await settleBreakers(probe, ports.gateways);
    // The shared limit, with Redis back. Per instance (Redis unused) each would allow RATE_LIMIT.
    const limitStatuses = await spendLimit(balancer, limitKey);

    // V8 collects the old generation when it sees fit, which an idle instance behind a load
    // balancer may put off for longer than the run waits: collect first, then watch.
    await collectGarbage(cluster.gateways[1] as Started);
    const after = await lowestMemory(memory, afterMs, () => sleep(afterMs));
    const endSentinel = await createDirect(rest, firstKey, `chaos-${run}-sentinel-end`);
    log(`reading pets ${startSentinel + 1n}..${endSentinel - 1n} through REST`);
    const stored = await checkStored(rest, keys, run, startSentinel, endSentinel, tally.failures);
    return {
      proofs: [
        ...clusterProofs(tally, stored, await faults, breakerTexts, instances),
        memoryProof(before, after),
        ...redisProofs(limitStatuses, instances, tally.latencies, await faults),
      ],
      outcomes: tally.outcomes,
      requests: requests + more,
      keysUsed: keys.filter((key) => key.sent > 0).length,
      instances,
      events,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await balancer.close();
    await steady.close();
    await rest.close();
    await Promise.all(cluster.processes.map((child) => child.stop('SIGTERM')));
    rmSync(dir, { recursive: true, force: true });
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
