import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createApiKey } from '../src/petstore/keys.ts';
import { openStorage } from '../src/petstore/storage.ts';
import { documentedCodes } from './documented-codes.ts';
import { sample } from './metrics-text.ts';
import { type Started, startNode } from './processes.ts';

export interface ChaosOptions {
  /** Seconds of mixed traffic while the reference service is killed and restarted. @default 60 */
  durationSeconds?: number;
  /** Distinct API keys the traffic uses (each created in the store). @default 200 */
  keys?: number;
  /** Requests in flight at once. @default 16 */
  concurrency?: number;
  /** WORKERS for the gateway. @default 1 */
  workers?: number;
  /** One line of progress for people; default: none. */
  log?: (line: string) => void;
}

/** One claim the run proves (or fails to). */
export interface Proof {
  name: string;
  passed: boolean;
  detail: string;
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

const LIST = 'query ChaosList { pets(limit: 10) { id name } }';
const PET = 'query ChaosPet($id: ID!) { pet(id: $id) { id name } }';
const CREATE = 'mutation ChaosCreate($input: NewPetInput!) { createPet(input: $input) { id name } }';

/** The reference service's down time per kill. */
const DOWN_MS = 1_500;
/** Up time after a restart before the next kill: the breaker's 5 s open, then its probe, with room. */
const UP_MS = 7_000;
/** The first kill comes after this much normal traffic. */
const FIRST_KILL_MS = 2_000;
/** Limits for "memory came back": garbage not yet collected and V8's sizing leave room, a leak does not. */
// V8 collects the old generation only once it has grown well past what the last full collection
// kept, so without a full collection "after" may hold up to about twice the live heap.
/**
 * How long "after" is watched, idle: V8's memory reducer runs a full collection some 8 s after
 * allocation stops. Samples are 500 ms apart: every scrape allocates too.
 */
const AFTER_MS = 12_000;
const HEAP_SLACK = { factor: 2, bytes: 32 * 2 ** 20 };
const RSS_SLACK = { factor: 2, bytes: 128 * 2 ** 20 };

interface Key {
  tag: string;
  authorization: string;
  /** Pets this key's createPet got acknowledged: id → name. */
  acked: Map<string, string>;
  sequence: number;
  /** Requests sent with this key. */
  sent: number;
}

type Op = 'list' | 'pet' | 'create';

/**
 * Runs the gateway (as `node src/main.ts`) on the reference service (as `node src/petstore/main.ts`,
 * a file-backed SQLite database) on loopback, drives mixed traffic from many keys while killing and
 * restarting the service, then checks what was answered and stored. Kills every process it started.
 */
export async function runChaos(options: ChaosOptions = {}): Promise<ChaosReport> {
  const durationMs = (options.durationSeconds ?? 60) * 1000;
  const keyCount = options.keys ?? 200;
  const concurrency = options.concurrency ?? 16;
  const log = options.log ?? (() => {});
  const started = Date.now();
  const run = randomBytes(3).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-chaos-'));
  const dbPath = join(dir, 'petstore.db');
  const codes = documentedCodes();
  const outcomes = new Map<string, number>();
  const count = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  const failures = { undocumented: [] as string[], leaks: [] as string[], lost: [] as string[] };
  const checked = { own: 0, intruder: 0 };
  const processes: Started[] = [];

  // The petstore's own key creation, straight into its database before it starts.
  const keys: Key[] = [];
  const storage = openStorage(dbPath);
  try {
    for (let i = 0; i < keyCount; i++) {
      const tag = `k${i}`;
      const key = createApiKey(storage, `chaos-${run}-${tag}`);
      keys.push({ tag, authorization: `Bearer ${key}`, acked: new Map(), sequence: 0, sent: 0 });
    }
  } finally {
    storage.close();
  }
  log(`created ${keyCount} keys in ${dbPath}`);

  const petstorePort = await freePort();
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
  let petstore = await startPetstore();
  const upstreamUrl = `http://127.0.0.1:${petstorePort}/v1`;
  const gateway = startNode('src/main.ts', {
    PORT: '0',
    HOST: '127.0.0.1',
    UPSTREAM_URL: upstreamUrl,
    LOG_LEVEL: 'warn',
    WORKERS: String(options.workers ?? 1),
  });
  processes.push(gateway);
  const rest = new Pool(`http://127.0.0.1:${petstorePort}`, { connections: 16 });
  let pool: Pool | undefined;

  try {
    const [, graphqlUrl] = await gateway.waitFor(/ at (http:\/\/\S+)\/graphql/);
    const origin = graphqlUrl as string;
    pool = new Pool(origin, { connections: concurrency + 2 });
    const gatewayPool = pool;
    const scrape = async () => {
      const { body } = await gatewayPool.request({ path: '/metrics', method: 'GET' });
      return body.text();
    };
    const memory = async () => {
      const text = await scrape();
      return {
        heap: sample(text, 'pet_gateway_nodejs_heap_size_used_bytes') ?? 0,
        rss: sample(text, 'pet_gateway_process_resident_memory_bytes') ?? 0,
      };
    };

    const send = async (key: Key | undefined, op: Op, authorization: string) => {
      if (key) key.sent++;
      let query = LIST;
      let variables: Record<string, unknown> = {};
      let sentName: string | undefined;
      let askedId: string | undefined;
      if (op === 'create') {
        query = CREATE;
        sentName = key ? `chaos-${run}-${key.tag}-${key.sequence++}` : `chaos-${run}-intruder`;
        variables = { input: { name: sentName, categoryId: '1', status: 'AVAILABLE' } };
      } else if (op === 'pet') {
        const own = key ? [...key.acked.keys()] : [];
        askedId = own.length > 0 ? own[Math.floor(Math.random() * own.length)] : '1';
        query = PET;
        variables = { id: askedId };
      }
      let status: number;
      let text: string;
      try {
        const response = await gatewayPool.request({
          path: '/graphql',
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify({ query, variables }),
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        status = response.statusCode;
        text = await response.body.text();
      } catch (error) {
        count(`no answer (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
        failures.undocumented.push(`${op}: no answer from the gateway`);
        return;
      }
      let answer: {
        data?: Record<string, unknown> | null;
        errors?: Array<{ extensions?: { code?: unknown } }>;
      };
      try {
        answer = JSON.parse(text);
      } catch {
        count(`HTTP ${status}, not JSON`);
        failures.undocumented.push(`${op}: HTTP ${status}, body not JSON`);
        return;
      }
      const errorCodes = (answer.errors ?? []).map((error) =>
        typeof error.extensions?.code === 'string' ? error.extensions.code : 'no code',
      );
      const field = answer.data?.[op === 'list' ? 'pets' : op === 'pet' ? 'pet' : 'createPet'];
      count(errorCodes.length > 0 ? errorCodes.join('+') : field ? 'data' : 'no data, no error');
      for (const code of errorCodes) {
        if (!codes.has(code) || code === 'INTERNAL_SERVER_ERROR' || code === 'INTERNAL') {
          failures.undocumented.push(`${op}: HTTP ${status}, code ${code}`);
        }
      }
      if (errorCodes.length === 0 && !field)
        failures.undocumented.push(`${op}: HTTP ${status}, no data and no error`);
      if (status >= 500 && errorCodes.length === 0)
        failures.undocumented.push(`${op}: HTTP ${status} without a code`);

      if (key === undefined) {
        checked.intruder++;
        if (field) failures.leaks.push(`an unknown key got data from ${op}`);
        return;
      }
      const ownPrefix = `chaos-${run}-${key.tag}-`;
      if (op === 'create' && field) {
        const pet = field as { id: string; name: string };
        checked.own++;
        if (pet.name !== sentName) failures.leaks.push(`createPet by ${key.tag} answered "${pet.name}"`);
        else key.acked.set(pet.id, pet.name);
      } else if (op === 'pet' && askedId !== undefined && key.acked.has(askedId)) {
        const pet = field as { id: string; name: string } | null | undefined;
        if (pet) checked.own++;
        if (pet && (pet.name !== key.acked.get(askedId) || !pet.name.startsWith(ownPrefix))) {
          failures.leaks.push(`pet(${askedId}) for ${key.tag} answered "${pet.name}"`);
        }
        if (errorCodes.includes('PET_NOT_FOUND'))
          failures.lost.push(`pet ${askedId}, acknowledged, answered PET_NOT_FOUND`);
      }
    };

    // Every pet the gateway creates from here on gets a larger id than this one.
    const startSentinel = await createDirect(rest, keys[0] as Key, `chaos-${run}-sentinel-start`);
    // Warm-up, then the "before" memory: the lowest heap over a second of light traffic.
    log(`gateway at ${origin}, warming up`);
    await traffic(keys, 4, 1_500, send, run);
    const before = await lowestMemory(memory, 1_000, () => traffic(keys, 2, 1_000, send, run));

    // The run: traffic from every key, and the reference service killed and restarted under it.
    log(`running ${durationMs / 1000} s of traffic with ${keyCount} keys, killing the reference service`);
    const kills: string[] = [];
    const runStart = Date.now();
    const monkey = (async () => {
      let at = FIRST_KILL_MS;
      let n = 0;
      while (at + DOWN_MS + UP_MS <= durationMs) {
        await sleep(runStart + at - Date.now());
        const signal: NodeJS.Signals = n++ % 2 === 0 ? 'SIGKILL' : 'SIGTERM';
        await petstore.stop(signal);
        kills.push(signal);
        log(`reference service stopped (${signal}) at ${((Date.now() - runStart) / 1000).toFixed(1)} s`);
        await sleep(DOWN_MS);
        petstore = await startPetstore();
        log(`reference service restarted at ${((Date.now() - runStart) / 1000).toFixed(1)} s`);
        at = Date.now() - runStart + UP_MS;
      }
    })();
    const requests = await traffic(keys, concurrency, durationMs, send, run, true);
    await monkey;

    // Settle: the breaker closes on the first successful probe after its open time.
    const settleUntil = Date.now() + 15_000;
    let metricsText = await scrape();
    while (Date.now() < settleUntil) {
      await send(keys[0], 'list', (keys[0] as Key).authorization);
      metricsText = await scrape();
      if (sample(metricsText, 'pet_gateway_upstream_breaker_state') === 0) break;
      await sleep(250);
    }
    const after = await lowestMemory(memory, AFTER_MS, () => sleep(AFTER_MS));
    const endSentinel = await createDirect(rest, keys[0] as Key, `chaos-${run}-sentinel-end`);

    // Every pet created during the run has an id between the sentinels: ids are SQLite rowids,
    // given in increasing order, and the store deletes nothing. Read each one through REST.
    log(`reading pets ${startSentinel + 1n}..${endSentinel - 1n} through REST`);
    const stored = await readRange(rest, keys[0] as Key, startSentinel + 1n, endSentinel - 1n);
    const byName = new Map<string, string[]>();
    for (const [id, name] of stored) byName.set(name, [...(byName.get(name) ?? []), id]);
    let acknowledged = 0;
    for (const key of keys) {
      for (const [id, name] of key.acked) {
        acknowledged++;
        const ids = byName.get(name) ?? [];
        if (ids.length !== 1 || ids[0] !== id)
          failures.lost.push(`${name} (id ${id}) stored as ids [${ids.join(', ')}]`);
      }
    }
    const ackedNames = new Set(keys.flatMap((key) => [...key.acked.values()]));
    let unacknowledgedStored = 0;
    for (const [name, ids] of byName) {
      if (!name.startsWith(`chaos-${run}-`)) continue;
      if (ids.length > 1) failures.lost.push(`${name} stored ${ids.length} times`);
      if (!ackedNames.has(name)) unacknowledgedStored++;
      if (name.includes('intruder')) failures.leaks.push(`an unknown key's createPet was stored (${name})`);
    }

    const transitions = (state: string) =>
      sample(metricsText, 'pet_gateway_upstream_breaker_transitions_total', `state="${state}"`) ?? 0;
    const breakerState = sample(metricsText, 'pet_gateway_upstream_breaker_state');
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
    const heapOk = after.heap <= before.heap * HEAP_SLACK.factor + HEAP_SLACK.bytes;
    const rssOk = after.rss <= before.rss * RSS_SLACK.factor + RSS_SLACK.bytes;
    const answered = [...outcomes.values()].reduce((a, b) => a + b, 0);
    const examples = (list: string[]) => (list.length === 0 ? '' : `; e.g. ${list.slice(0, 3).join('; ')}`);

    const proofs: Proof[] = [
      {
        name: 'every answer: data or a documented code',
        passed: failures.undocumented.length === 0 && answered > 0,
        detail: `${answered} answers, ${failures.undocumented.length} without${examples(failures.undocumented)}`,
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
        name: 'breaker opened and closed',
        passed: transitions('open') > 0 && transitions('closed') > 0 && breakerState === 0,
        detail: `transitions: open ${transitions('open')}, half-open ${transitions('half-open')}, closed ${transitions('closed')}; now ${breakerState === 0 ? 'closed' : `state ${breakerState}`}`,
      },
      {
        name: 'memory came back',
        passed: heapOk && rssOk,
        detail: `heap used ${mb(before.heap)} → ${mb(after.heap)} (limit ${mb(before.heap * HEAP_SLACK.factor + HEAP_SLACK.bytes)}), RSS ${mb(before.rss)} → ${mb(after.rss)} (limit ${mb(before.rss * RSS_SLACK.factor + RSS_SLACK.bytes)})`,
      },
    ];
    return {
      proofs,
      outcomes,
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

/**
 * `concurrency` loops sending for `ms`: lists, `pet(id)` and `createPet` in turn, key after key
 * (so every key is used), with an unknown key now and then. Resolves with the requests sent.
 */
async function traffic(
  keys: Key[],
  concurrency: number,
  ms: number,
  send: (key: Key | undefined, op: Op, authorization: string) => Promise<void>,
  run: string,
  intruders = false,
): Promise<number> {
  const until = Date.now() + ms;
  let sent = 0;
  const ops: Op[] = ['list', 'pet', 'create', 'list', 'pet', 'create', 'list'];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const i = sent++;
        const op = ops[i % ops.length] as Op;
        if (intruders && i % 29 === 0) {
          await send(undefined, op, `Bearer chaos-intruder-${run}-${i}`);
          continue;
        }
        const key = keys[i % keys.length] as Key;
        await send(key, op, key.authorization);
      }
    }),
  );
  return sent;
}

/** The lowest heap and RSS sampled every 500 ms over `ms`, while `load` runs. */
async function lowestMemory(
  read: () => Promise<{ heap: number; rss: number }>,
  ms: number,
  load: () => Promise<unknown>,
): Promise<{ heap: number; rss: number }> {
  const running = load();
  let lowest = await read();
  for (const until = Date.now() + ms; Date.now() < until; ) {
    await sleep(500);
    const now = await read();
    lowest = { heap: Math.min(lowest.heap, now.heap), rss: Math.min(lowest.rss, now.rss) };
  }
  await running;
  return lowest;
}

/** POST /v1/pets straight to the reference service; its id, exact. */
async function createDirect(rest: Pool, key: Key, name: string): Promise<bigint> {
  const { statusCode, body } = await rest.request({
    path: '/v1/pets',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: key.authorization },
    body: JSON.stringify({ name, categoryId: 1 }),
  });
  const text = await body.text();
  if (statusCode !== 201) throw new Error(`reference service: POST /v1/pets answered ${statusCode}: ${text}`);
  return BigInt(/"id":(\d+)/.exec(text)?.[1] ?? Number.NaN);
}

/** GET /v1/pets/{id} for every id in [from, to], 16 at a time: id → name of the pets that exist. */
async function readRange(rest: Pool, key: Key, from: bigint, to: bigint): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let next = from;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next <= to) {
        const id = next++;
        const { statusCode, body } = await rest.request({
          path: `/v1/pets/${id}`,
          method: 'GET',
          headers: { authorization: key.authorization },
        });
        const pet = (await body.json()) as { name?: string };
        if (statusCode === 200 && pet.name !== undefined) found.set(String(id), pet.name);
        else if (statusCode !== 404)
          throw new Error(`reference service: GET /v1/pets/${id} answered ${statusCode}`);
      }
    }),
  );
  return found;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
