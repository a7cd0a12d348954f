/**
 * The load generators behind one interface: wrk when it is installed, autocannon (in this process)
 * otherwise, and autocannon for a fixed-rate workload in any case: wrk has no rate limit, and wrk2,
 * which has one, is not packaged in Debian.
 *
 * wrk (C, Debian's `wrk` package) takes a few percent of a core where autocannon, a Node process
 * beside the targets, takes a large share of a 2-core machine's CPU from them. One thread; each run
 * gets a Lua script (in a temp file) that sets the method, headers and body, builds a unique body
 * per request when the workload needs one, checks every answer, and prints the results as one JSON
 * line.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { reapedChildrenCpuMicros } from './cpu-time.ts';
import { bodyText, headersOf, type RequestSpec } from './workloads.ts';

export type GeneratorName = 'wrk' | 'autocannon';

/** One run's figures, whichever generator made them. */
export interface LoadResult {
  generator: GeneratorName;
  /** Completed requests, whatever their status. */
  requests: number;
  /** How long the load ran. */
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors and timeouts. */
  errors: number;
  non2xx: number;
  /** 2xx answers whose body carried a GraphQL `errors` entry. */
  graphqlErrors: number;
  /** CPU the generator itself used: taken from the targets on a machine with few cores. */
  generatorCpuMicros: number;
}

/** One run to make: `spec` sent to `url` for `seconds`, over `connections`. */
export interface Load {
  url: string;
  spec: RequestSpec;
  seconds: number;
  connections: number;
  /** Requests/s over all connections; unset = as fast as the target answers. */
  rate?: number;
  /** The bearer keys the requests take in turn (see apiKeys). */
  keys: readonly string[];
}

/**
 * Runs one load: with wrk (given its path) unless the load has a fixed rate, which only autocannon
 * can offer.
 */
export function runLoad(wrk: string | undefined, load: Load): Promise<LoadResult> {
  return wrk !== undefined && load.rate === undefined ? runWrk(wrk, load) : runAutocannon(load);
}

let tokenCounter = 0;

/** A body for one request outside the load (the bench's checks), unique when the spec's bodies are. */
export function nextBody(spec: RequestSpec): string | undefined {
  return bodyText(spec, `c${tokenCounter++}`);
}

async function runAutocannon(load: Load): Promise<LoadResult> {
  const { spec, keys } = load;
  const [firstKey = ''] = keys;
  // A request built per request only when something in it changes: one key and a fixed body keep
  // autocannon's prebuilt request, as before keys rotated.
  const perRequest = keys.length > 1 || typeof spec.body === 'object';
  const headers = keys.map((key) => headersOf(spec, key));
  let turn = 0;
  const cpuBefore = process.cpuUsage();
  const result = await autocannon({
    url: load.url,
    connections: load.connections,
    duration: load.seconds,
    ...(load.rate === undefined ? {} : { overallRate: load.rate }),
    method: spec.method,
    headers: headersOf(spec, firstKey),
    ...(typeof spec.body === 'string' ? { body: spec.body } : {}),
    ...(perRequest
      ? {
          requests: [
            {
              setupRequest: (req) => ({
                ...req,
                headers: headers[turn++ % headers.length],
                ...(typeof spec.body === 'object' ? { body: nextBody(spec) } : {}),
              }),
            },
          ],
        }
      : {}),
    // A 200 carrying GraphQL errors is not a success; REST bodies never contain this key.
    verifyBody: (text) => !text.includes('"errors"'),
  });
  // The whole bench process: autocannon is all it does while the load runs.
  const cpu = process.cpuUsage(cpuBefore);
  return {
    generator: 'autocannon',
    requests: result.requests.total,
    seconds: result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    graphqlErrors: result.mismatches,
    generatorCpuMicros: cpu.user + cpu.system,
  };
}

const execFileAsync = promisify(execFile);

/** Marks the line `done()` prints, among wrk's own report. */
const RESULT_MARKER = 'BENCH_WRK_RESULT ';
/** As autocannon's default, so a slow answer counts as a timeout under either generator. */
const TIMEOUT_SECONDS = 10;

/** The path of `wrk` on PATH, or undefined. */
export function findWrk(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, 'wrk');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}

/** A Lua string literal holding `text`'s UTF-8 bytes exactly. */
function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    const printable = byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
    out += printable ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

let runCounter = 0;

/** A Lua table constructor holding `headers`. */
function luaTable(headers: Record<string, string>): string {
  return `{ ${Object.entries(headers)
    .map(([name, value]) => `[${luaString(name)}] = ${luaString(value)}`)
    .join(', ')} }`;
}

/** The Lua script for one run of `spec`, its requests taking `keys` in turn. */
function wrkScript(spec: RequestSpec, keys: readonly string[]): string {
  const lines = [`wrk.method = ${luaString(spec.method)}`];
  const [firstKey = ''] = keys;
  for (const [name, value] of Object.entries(headersOf(spec, firstKey))) {
    lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  }
  const body = spec.body;
  if (typeof body === 'string') lines.push(`wrk.body = ${luaString(body)}`);
  if (typeof body === 'object') {
    // Tokens unique across this bench's wrk runs (each wrk counts from 0), like autocannon's.
    // wrk.format fills in Host (from wrk.headers) and Content-Length in the table it is given.
    lines.push(
      `local before, after, run = ${luaString(body.before)}, ${luaString(body.after)}, ${luaString(`w${++runCounter}_`)}`,
      `local headers = { ${keys.map((key) => luaTable(headersOf(spec, key))).join(', ')} }`,
      'local n = 0',
      'function request()',
      '  n = n + 1',
      '  return wrk.format(nil, nil, headers[n % #headers + 1], before .. run .. n .. after)',
      'end',
    );
  } else if (keys.length > 1) {
    // The same request but for its key: built once per key in init, then only picked in turn.
    lines.push(
      `local keyed = { ${keys.map((key) => luaTable(headersOf(spec, key))).join(', ')} }`,
      'local requests, n = {}, 0',
      'function request()',
      '  n = n + 1',
      '  local i = n % #keyed + 1',
      '  local r = requests[i]',
      '  if r == nil then r = wrk.format(nil, nil, keyed[i], nil); requests[i] = r end',
      '  return r',
      'end',
    );
  }
  lines.push(
    'local threads = {}',
    'function setup(thread) threads[#threads + 1] = thread end',
    'function init(args) non2xx = 0; graphqlErrors = 0 end',
    // As autocannon's verifyBody: a 200 carrying GraphQL errors is not a success; REST bodies never
    // contain this key. Every target's answers are read the same way, so wrk costs each the same.
    'function response(status, headers, body)',
    '  if status < 200 or status > 299 then non2xx = non2xx + 1',
    `  elseif body ~= nil and string.find(body, ${luaString('"errors"')}, 1, true) then graphqlErrors = graphqlErrors + 1 end`,
    'end',
    'function done(summary, latency, requests)',
    '  local non2xx, graphqlErrors = 0, 0',
    '  for _, t in ipairs(threads) do',
    '    non2xx = non2xx + t:get("non2xx")',
    '    graphqlErrors = graphqlErrors + t:get("graphqlErrors")',
    '  end',
    '  local e = summary.errors',
    `  io.write(${luaString(RESULT_MARKER)}, string.format(`,
    `    ${luaString('{"requests":%d,"durationMicros":%d,"p50Micros":%d,"p90Micros":%d,"p99Micros":%d,"maxMicros":%d,"socketErrors":%d,"timeouts":%d,"non2xx":%d,"graphqlErrors":%d}')},`,
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),',
    '    latency:percentile(99), latency.max, e.connect + e.read + e.write, e.timeout, non2xx, graphqlErrors), "\\n")',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

/** What `done()` prints. */
interface WrkSummary {
  requests: number;
  durationMicros: number;
  p50Micros: number;
  p90Micros: number;
  p99Micros: number;
  maxMicros: number;
  socketErrors: number;
  timeouts: number;
  non2xx: number;
  graphqlErrors: number;
}

/** Runs wrk once, for whole seconds (wrk's resolution), and returns what it measured. */
async function runWrk(wrk: string, load: Load): Promise<LoadResult> {
  const { url, spec, seconds, connections } = load;
  const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-wrk-'));
  const script = join(dir, 'load.lua');
  writeFileSync(script, wrkScript(spec, load.keys));
  const args = ['-t1', `-c${connections}`, `-d${Math.max(1, Math.ceil(seconds))}s`];
  args.push('--timeout', `${TIMEOUT_SECONDS}s`, '-s', script, url);
  try {
    const cpuBefore = reapedChildrenCpuMicros();
    // execFile settles on `close`: both streams drained and the child waited for, so its CPU time
    // is in this process's reaped-children account.
    const { stdout } = await execFileAsync(wrk, args).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`wrk ${args.join(' ')} failed:\n${error.stdout ?? ''}${error.stderr ?? error}`);
    });
    const cpuAfter = reapedChildrenCpuMicros();
    const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARKER));
    if (line === undefined) throw new Error(`wrk ${args.join(' ')}: no result line:\n${stdout}`);
    const result = JSON.parse(line.slice(RESULT_MARKER.length)) as WrkSummary;
    return {
      generator: 'wrk',
      requests: result.requests,
      seconds: result.durationMicros / 1e6,
      p50Ms: result.p50Micros / 1000,
      p99Ms: result.p99Micros / 1000,
      errors: result.socketErrors + result.timeouts,
      non2xx: result.non2xx,
      graphqlErrors: result.graphqlErrors,
      generatorCpuMicros:
        cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : cpuAfter - cpuBefore,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
