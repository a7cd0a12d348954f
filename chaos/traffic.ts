import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import type { Pool } from 'undici';
import { createApiKey } from '../src/petstore/keys.ts';
import { openStorage } from '../src/petstore/storage.ts';
import { documentedCodes } from './documented-codes.ts';

// What every chaos run shares: the traffic (lists, pet(id), createPet, key after key, unknown keys
// now and then), the check of every answer as it arrives, and the reading back of what was stored.

export interface Key {
  tag: string;
  authorization: string;
  /** Pets this key's createPet got acknowledged: id → name. */
  acked: Map<string, string>;
  sequence: number;
  /** Requests sent with this key. */
  sent: number;
}

/** `apq`: a list sent as its SHA-256 alone (automatic persisted queries), then with its text if not found. */
export type Op = 'list' | 'pet' | 'create' | 'apq';

const LIST = 'query ChaosList { pets(limit: 10) { id name } }';
const PET = 'query ChaosPet($id: ID!) { pet(id: $id) { id name } }';
const CREATE = 'mutation ChaosCreate($input: NewPetInput!) { createPet(input: $input) { id name } }';
const APQ = 'query ChaosApq { pets(limit: 5) { id name } }';
const APQ_EXTENSIONS = {
  persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(APQ).digest('hex') },
};

/** Creates `count` keys with the petstore's own key creation, straight into its database. */
export function createKeys(dbPath: string, count: number, run: string, prefix = 'k'): Key[] {
  const keys: Key[] = [];
  const storage = openStorage(dbPath);
  try {
    for (let i = 0; i < count; i++) {
      const tag = `${prefix}${i}`;
      const key = createApiKey(storage, `chaos-${run}-${tag}`);
      keys.push({ tag, authorization: `Bearer ${key}`, acked: new Map(), sequence: 0, sent: 0 });
    }
  } finally {
    storage.close();
  }
  return keys;
}

/** What the answers were, kept as they arrive. */
export interface Tally {
  /** Answers by outcome: `data`, or the error codes an answer carried, or the failure. */
  outcomes: Map<string, number>;
  failures: { undocumented: string[]; leaks: string[]; lost: string[] };
  checked: { own: number; intruder: number };
  /** Each answer's start (ms since the epoch) and duration (ms). */
  latencies: Array<{ at: number; ms: number }>;
  /**
   * When each request that the load balancer answered with its own 502 (not JSON) started (ms
   * since the epoch): a request in flight on a gateway instance when it was SIGKILLed, or sent on
   * a connection nginx still held to it. Only a multi-instance run expects them.
   */
  balancerErrors: number[];
}

export interface SenderOptions {
  balancer?: boolean;
  /**
   * Behind the load balancer, the address each caller sends from (as `X-Forwarded-For`, which
   * nginx extends and the gateway reads from it): a crowd has many addresses, not one.
   */
  forwardedFor?: (key: Key | undefined) => string;
}

/** What a sender keeps between requests: where it sends, how, and what it has counted. */
interface Sender {
  pool: Pool;
  run: string;
  options: SenderOptions;
  codes: Set<string>;
  tally: Tally;
  count: (outcome: string) => void;
}

/** A GraphQL answer as far as the checks read it. */
interface GraphqlAnswer {
  data?: Record<string, unknown> | null;
  errors?: Array<{ extensions?: { code?: unknown } }>;
}

/** One request of `op`: its body, and what a key's answer is checked against. */
function operation(op: Op, key: Key | undefined, run: string) {
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
  const body: Record<string, unknown> = op === 'apq' ? { extensions: APQ_EXTENSIONS } : { query, variables };
  return { body, sentName, askedId };
}

/**
 * POSTs `body` and reads its answer, as an APQ client does: a hash the store does not hold is sent
 * again with its text. Undefined, counted, when there is no JSON answer to check.
 */
async function exchange(
  sender: Sender,
  request: { key: Key | undefined; op: Op; authorization: string; body: Record<string, unknown> },
  startedAt: number,
  startedMs: number,
): Promise<{ status: number; answer: GraphqlAnswer } | undefined> {
  const { pool, options, tally, count } = sender;
  const { key, op, authorization } = request;
  let body = request.body;
  for (;;) {
    let status: number;
    let text: string;
    try {
      const response = await pool.request({
        path: '/graphql',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization,
          ...(options.forwardedFor ? { 'x-forwarded-for': options.forwardedFor(key) } : {}),
        },
        body: JSON.stringify(body),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      status = response.statusCode;
      text = await response.body.text();
      tally.latencies.push({ at: startedAt, ms: performance.now() - startedMs });
    } catch (error) {
      count(`no answer (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      tally.failures.undocumented.push(`${op}: no answer from the gateway`);
      return undefined;
    }
    let answer: GraphqlAnswer;
    try {
      answer = JSON.parse(text);
    } catch {
      if (options.balancer && status === 502) {
        tally.balancerErrors.push(startedAt);
        count('HTTP 502 from the load balancer');
        return undefined;
      }
      count(`HTTP ${status}, not JSON`);
      tally.failures.undocumented.push(`${op}: HTTP ${status}, body not JSON`);
      return undefined;
    }
    const notFound = answer.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND';
    if (op !== 'apq' || !notFound || 'query' in body) return { status, answer };
    count('PERSISTED_QUERY_NOT_FOUND, then sent with its text');
    body = { query: APQ, extensions: APQ_EXTENSIONS };
  }
}

/** Counts an answer by outcome and notes what no answer may hold: its error codes and its field. */
function checkAnswer(sender: Sender, key: Key | undefined, op: Op, status: number, answer: GraphqlAnswer) {
  const { codes, options, count } = sender;
  const { undocumented } = sender.tally.failures;
  const errorCodes = (answer.errors ?? []).map((error) =>
    typeof error.extensions?.code === 'string' ? error.extensions.code : 'no code',
  );
  const field = answer.data?.[op === 'list' || op === 'apq' ? 'pets' : op === 'pet' ? 'pet' : 'createPet'];
  count(errorCodes.length > 0 ? errorCodes.join('+') : field ? 'data' : 'no data, no error');
  for (const code of errorCodes) {
    if (!codes.has(code) || code === 'INTERNAL_SERVER_ERROR' || code === 'INTERNAL') {
      undocumented.push(`${op}: HTTP ${status}, code ${code}`);
    }
  }
  // Behind the balancer each key has its own address, the unknown keys another: their refusals
  // must never hold a real caller back.
  if (key && options.forwardedFor && errorCodes.includes('REFUSED_KEYS_LIMITED'))
    undocumented.push(`${op}: a valid key refused REFUSED_KEYS_LIMITED (another address's junk keys)`);
  if (errorCodes.length === 0 && !field) undocumented.push(`${op}: HTTP ${status}, no data and no error`);
  if (status >= 500 && errorCodes.length === 0) undocumented.push(`${op}: HTTP ${status} without a code`);
  return { errorCodes, field };
}

/** Checks a key got only its own pets: the name it created, the pets it was told are its own. */
function checkOwn(
  sender: Sender,
  key: Key,
  sent: { op: Op; sentName: string | undefined; askedId: string | undefined },
  answered: { errorCodes: string[]; field: unknown },
): void {
  const { checked, failures } = sender.tally;
  const { op, sentName, askedId } = sent;
  const { errorCodes, field } = answered;
  const ownPrefix = `chaos-${sender.run}-${key.tag}-`;
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
}

/**
 * Sends one operation through `pool` (the gateway, or the load balancer in front of several) and
 * checks its answer: JSON, data or documented codes, and never another key's data.
 */
export function createSender(pool: Pool, run: string, options: SenderOptions = {}) {
  const tally: Tally = {
    outcomes: new Map(),
    failures: { undocumented: [], leaks: [], lost: [] },
    checked: { own: 0, intruder: 0 },
    latencies: [],
    balancerErrors: [],
  };
  const { outcomes } = tally;
  const count = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  const sender: Sender = { pool, run, options, codes: documentedCodes(), tally, count };
  const send = async (key: Key | undefined, op: Op, authorization: string) => {
    const startedAt = Date.now();
    const startedMs = performance.now();
    if (key) key.sent++;
    const { body, sentName, askedId } = operation(op, key, run);
    const exchanged = await exchange(sender, { key, op, authorization, body }, startedAt, startedMs);
    if (exchanged === undefined) return;
    const answered = checkAnswer(sender, key, op, exchanged.status, exchanged.answer);
    if (key === undefined) {
      tally.checked.intruder++;
      if (answered.field) tally.failures.leaks.push(`an unknown key got data from ${op}`);
      return;
    }
    checkOwn(sender, key, { op, sentName, askedId }, answered);
  };
  return { send, tally };
}

/**
 * `concurrency` loops sending for `ms`: lists, `pet(id)` and `createPet` in turn, key after key
 * (so every key is used), with an unknown key now and then. Resolves with the requests sent.
 */
export async function traffic(
  keys: Key[],
  concurrency: number,
  ms: number,
  send: (key: Key | undefined, op: Op, authorization: string) => Promise<void>,
  run: string,
  intruders = false,
  ops: Op[] = ['list', 'pet', 'create', 'list', 'pet', 'create', 'list'],
): Promise<number> {
  const until = Date.now() + ms;
  let sent = 0;
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
export async function lowestMemory(
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

/**
 * Reads back every pet created between the two sentinels (ids are SQLite rowids, handed out in
 * order, and the store deletes nothing) and checks each acknowledged create is stored once, under
 * the id it answered; an unknown key's create must not be stored at all.
 */
export async function checkStored(
  rest: Pool,
  keys: Key[],
  run: string,
  startSentinel: bigint,
  endSentinel: bigint,
  failures: Tally['failures'],
) {
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
  return { stored, acknowledged, unacknowledgedStored };
}

/** POST /v1/pets straight to the reference service; its id, exact. */
export async function createDirect(rest: Pool, key: Key, name: string): Promise<bigint> {
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

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
