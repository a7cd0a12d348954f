import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { sample } from './metrics-text.ts';
import { collectGarbage, type Started, startCommand, startNode } from './processes.ts';
import { answerProofs, type Memory, memoryProof, type Proof } from './proofs.ts';
import {
  checkStored,
  createDirect,
  createKeys,
  createSender,
  freePort,
  type Key,
  lowestMemory,
  sleep,
  traffic,
} from './traffic.ts';

export type { Proof } from './proofs.ts';

export interface ChaosOptions {
  /** Seconds of mixed traffic while the reference service is killed and restarted. @default 60 */
  durationSeconds?: number;
  /** Distinct API keys the traffic uses (each created in the store). @default 200 */
  keys?: number;
  /** Requests in flight at once. @default 16 */
  concurrency?: number;
  /** WORKERS for the gateway. @default 1 */
  workers?: number;
  /** How long "after" is watched for memory. @default AFTER_MS (12 s) */
  afterMs?: number;
  /** One line of progress for people; default: none. */
  log?: (line: string) => void;
}

export interface ChaosReport {
  proofs: Proof[];
  /** Answers by outcome: `data`, or the error codes an answer carried, or the failure. */
  outcomes: Map<string, number>;
  requests: number;
  keysUsed: number;
  kills: string[];
  seconds: number;
}

/** The reference service's down time per kill. */
const DOWN_MS = 1_500;
/** Up time after a restart before the next kill: the breaker's 5 s open, then its probe, with room. */
const UP_MS = 7_000;
/** The first kill comes after this much normal traffic. */
const FIRST_KILL_MS = 2_000;
/** The shortest run with a kill in it (and so a breaker to open and close): 11 s. */
export const MIN_DURATION_SECONDS = Math.ceil((FIRST_KILL_MS + DOWN_MS + UP_MS) / 1000);
/**
 * How long "after" is watched, idle: V8's memory reducer runs a full collection some 8 s after
 * allocation stops. Samples are 500 ms apart: every scrape allocates too.
 */
export const AFTER_MS = 12_000;

/** The reference service on `port`, over the database at `dbPath`, noted in `processes` to be stopped. */
async function startPetstore(port: number, dbPath: string, processes: Started[]): Promise<Started> {
  const petstore = startNode('src/petstore/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    PETSTORE_DB: dbPath,
  });
  processes.push(petstore);
  await petstore.waitFor(/petstore listening on/);
  return petstore;
}

/** The gateway, as `node src/main.ts` with `workers` workers, in front of `upstreamUrl`. */
function startGateway(upstreamUrl: string, workers: number): Started {
  // One process: its inspector (loopback, a port of its own) lets the run collect garbage before it
  // reads memory. Workers would each need their own, and /metrics sums them: they are left to V8.
  return startCommand(
    process.execPath,
    [...(workers === 1 ? ['--inspect=127.0.0.1:0'] : []), 'src/main.ts'],
    { PORT: '0', HOST: '127.0.0.1', UPSTREAM_URL: upstreamUrl, LOG_LEVEL: 'warn', WORKERS: String(workers) },
    'src/main.ts',
  );
}

/** The heap used and the resident memory a gateway's /metrics text reports. */
export function memoryIn(text: string): Memory {
  return {
    heap: sample(text, 'pet_gateway_nodejs_heap_size_used_bytes') ?? 0,
    rss: sample(text, 'pet_gateway_process_resident_memory_bytes') ?? 0,
  };
}

/**
 * Stops the reference service (SIGKILL and SIGTERM in turn) and restarts it after DOWN_MS, UP_MS
 * apart, while a whole cycle still fits in `durationMs` from `runStart`. Resolves with the signals.
 */
async function killAndRestart(
  first: Started,
  restart: () => Promise<Started>,
  timing: { runStart: number; durationMs: number },
  log: (line: string) => void,
): Promise<string[]> {
  const { runStart, durationMs } = timing;
  const kills: string[] = [];
  let petstore = first;
  let at = FIRST_KILL_MS;
  let n = 0;
  while (at + DOWN_MS + UP_MS <= durationMs) {
    await sleep(runStart + at - Date.now());
    const signal: NodeJS.Signals = n++ % 2 === 0 ? 'SIGKILL' : 'SIGTERM';
    await petstore.stop(signal);
    kills.push(signal);
    log(`reference service stopped (${signal}) at ${((Date.now() - runStart) / 1000).toFixed(1)} s`);
    await sleep(DOWN_MS);
    petstore = await restart();
    log(`reference service restarted at ${((Date.now() - runStart) / 1000).toFixed(1)} s`);
    at = Date.now() - runStart + UP_MS;
  }
  return kills;
}

/**
 * Lists sent with `key` until the breaker reads closed, for 15 s at most: it closes on the first
 * successful probe after its open time. The last /metrics text read.
 */
async function settle(
  send: ReturnType<typeof createSender>['send'],
  key: Key,
  scrape: () => Promise<string>,
): Promise<string> {
  const settleUntil = Date.now() + 15_000;
  let metricsText = await scrape();
  while (Date.now() < settleUntil) {
    await send(key, 'list', key.authorization);
    metricsText = await scrape();
    if (sample(metricsText, 'pet_gateway_upstream_breaker_state') === 0) break;
    await sleep(250);
  }
  return metricsText;
}

/** "breaker opened and closed", from the gateway's /metrics text once the run settled. */
function breakerProof(metricsText: string): Proof {
  const transitions = (state: string) =>
    sample(metricsText, 'pet_gateway_upstream_breaker_transitions_total', `state="${state}"`) ?? 0;
  const breakerState = sample(metricsText, 'pet_gateway_upstream_breaker_state');
  return {
    name: 'breaker opened and closed',
    passed: transitions('open') > 0 && transitions('closed') > 0 && breakerState === 0,
    detail: `transitions: open ${transitions('open')}, half-open ${transitions('half-open')}, closed ${transitions('closed')}; now ${breakerState === 0 ? 'closed' : `state ${breakerState}`}`,
  };
}

/**
 * Runs the gateway (as `node src/main.ts`) on the reference service (as `node src/petstore/main.ts`,
 * a file-backed SQLite database) on loopback, drives mixed traffic from many keys while killing and
 * restarting the service, then checks what was answered and stored. Kills every process it started.
 */
export async function runChaos(options: ChaosOptions = {}): Promise<ChaosReport> {
  const durationMs = (options.durationSeconds ?? 60) * 1000;
  const keyCount = options.keys ?? 200;
  const concurrency = options.concurrency ?? 16;
  const workers = options.workers ?? 1;
  const log = options.log ?? (() => {});
  const started = Date.now();
  const run = randomBytes(3).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-chaos-'));
  const dbPath = join(dir, 'petstore.db');
  const processes: Started[] = [];

  const keys = createKeys(dbPath, keyCount, run);
  const firstKey = keys[0] as Key;
  log(`created ${keyCount} keys in ${dbPath}`);

  const petstorePort = await freePort();
  const restartPetstore = () => startPetstore(petstorePort, dbPath, processes);
  const petstore = await restartPetstore();
  const gateway = startGateway(`http://127.0.0.1:${petstorePort}/v1`, workers);
  processes.push(gateway);
  const rest = new Pool(`http://127.0.0.1:${petstorePort}`, { connections: 16 });
  let pool: Pool | undefined;

  try {
    const [, graphqlUrl] = await gateway.waitFor(/ at (http:\/\/\S+)\/graphql/);
    const origin = graphqlUrl as string;
    const gatewayPool = new Pool(origin, { connections: concurrency + 2 });
    pool = gatewayPool;
    const scrape = async () => (await gatewayPool.request({ path: '/metrics', method: 'GET' })).body.text();
    const memory = async () => memoryIn(await scrape());
    const { send, tally } = createSender(gatewayPool, run);

    // Every pet the gateway creates from here on gets a larger id than this one.
    const startSentinel = await createDirect(rest, firstKey, `chaos-${run}-sentinel-start`);
    // Warm-up, then the "before" memory: the lowest heap over a second of light traffic.
    log(`gateway at ${origin}, warming up`);
    await traffic(keys, 4, 1_500, send, run);
    const before = await lowestMemory(memory, 1_000, () => traffic(keys, 2, 1_000, send, run));

    // The run: traffic from every key, and the reference service killed and restarted under it.
    log(`running ${durationMs / 1000} s of traffic with ${keyCount} keys, killing the reference service`);
    const runStart = Date.now();
    const monkey = killAndRestart(petstore, restartPetstore, { runStart, durationMs }, log);
    const requests = await traffic(keys, concurrency, durationMs, send, run, true);
    const kills = await monkey;

    const metricsText = await settle(send, firstKey, scrape);
    if (workers === 1) await collectGarbage(gateway);
    const afterMs = options.afterMs ?? AFTER_MS;
    const after = await lowestMemory(memory, afterMs, () => sleep(afterMs));
    const endSentinel = await createDirect(rest, firstKey, `chaos-${run}-sentinel-end`);

    // Every pet created during the run has an id between the sentinels: ids are SQLite rowids,
    // given in increasing order, and the store deletes nothing. Read each one through REST.
    log(`reading pets ${startSentinel + 1n}..${endSentinel - 1n} through REST`);
    const stored = await checkStored(rest, keys, run, startSentinel, endSentinel, tally.failures);
    return {
      proofs: [...answerProofs(tally, stored), breakerProof(metricsText), memoryProof(before, after)],
      outcomes: tally.outcomes,
      requests,
      keysUsed: keys.filter((key) => key.sent > 0).length,
      kills,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await pool?.close();
    await rest.close();
    await Promise.all(processes.map((child) => child.stop('SIGTERM')));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The chaos run's table: one row per proof, then what the answers were. */
export function formatReport(report: ChaosReport): string {
  const lines = [
    `chaos run: ${report.requests} requests from ${report.keysUsed} keys in ${report.seconds.toFixed(0)} s; reference service stopped ${report.kills.length}× (${report.kills.join(', ')}) and restarted`,
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
  ];
  return lines.join('\n');
}
