/**
 * The load generators behind one interface: wrk when it is installed (C, a few percent of a core,
 * where autocannon, a Node process, takes a large share of a 2-core machine from the targets), and
 * autocannon otherwise or for a fixed rate (wrk has none; wrk2 is not packaged in Debian).
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

/** `spec` sent to `url` for `seconds` over `connections`, at `rate` req/s (unset: as fast as answered). */
export interface Load {
  url: string;
  spec: RequestSpec;
  seconds: number;
  connections: number;
  rate?: number;
  /**
   * Requests per second each connection sends at most (unset: as fast as answered): a smoke run
   * checks the harness, not the speed, so it paces the load rather than take both cores from the
   * test suite running beside it.
   */
  pace?: number;
  /** The bearer keys the requests take in turn. */
  keys: readonly string[];
}

export function runLoad(wrk: string | undefined, load: Load): Promise<LoadResult> {
  return wrk !== undefined && load.rate === undefined ? runWrk(wrk, load) : runAutocannon(load);
}

let tokenCounter = 0;

/** A body for one request outside the load (the bench's checks), unique when the spec's bodies are. */
export function nextBody(spec: RequestSpec): string | undefined {
  return bodyText(spec, `c${tokenCounter++}`);
}

// A 200 carrying GraphQL errors is not a success; REST bodies never contain this key. Both
// generators read every target's answers this way, so reading costs each the same.
const ERRORS_KEY = '"errors"';

async function runAutocannon(load: Load): Promise<LoadResult> {
  const { spec, keys } = load;
  // Built per request only when something in it changes: otherwise autocannon's prebuilt request.
  const counted = typeof spec.body === 'object';
  const headers = keys.map((key) => headersOf(spec, key));
  let turn = 0;
  const cpuBefore = process.cpuUsage();
  const result = await autocannon({
    url: load.url,
    connections: load.connections,
    duration: load.seconds,
    ...(load.rate === undefined ? {} : { overallRate: load.rate }),
    ...(load.pace === undefined ? {} : { connectionRate: load.pace }),
    method: spec.method,
    headers: headersOf(spec, keys[0] ?? ''),
    ...(typeof spec.body === 'string' ? { body: spec.body } : {}),
    ...(keys.length > 1 || counted
      ? {
          requests: [
            {
              setupRequest: (req) => ({
                ...req,
                headers: headers[turn++ % headers.length],
                ...(counted ? { body: nextBody(spec) } : {}),
              }),
            },
          ],
        }
      : {}),
    verifyBody: (text) => !text.includes(ERRORS_KEY),
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

/** The path of `wrk` on PATH, or undefined. */
export function findWrk(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      if (dir === '') continue;
      accessSync(join(dir, 'wrk'), constants.X_OK);
      return join(dir, 'wrk');
    } catch {}
  }
  return undefined;
}

/** A Lua string literal holding `text`'s UTF-8 bytes exactly. */
function lua(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    const printable = byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
    out += printable ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** Marks the line `done()` prints, among wrk's own report. */
const RESULT_MARKER = 'BENCH_WRK_RESULT ';
let runCounter = 0;

/**
 * The Lua script for one run: method, headers and body; with several keys or a counted body, a
 * `request()` taking the keys in turn (a fixed body's request built once per key, a counted body's
 * every time, its tokens unique across this bench's runs); answers counted; results as one JSON line.
 */
function wrkScript(spec: RequestSpec, keys: readonly string[], pace: number | undefined): string {
  const headers = (key: string) =>
    `{ ${Object.entries(headersOf(spec, key))
      .map(([name, value]) => `[${lua(name)}] = ${lua(value)}`)
      .join(', ')} }`;
  const lines = [
    `wrk.method = ${lua(spec.method)}`,
    `local keyed, built, n = { ${keys.map(headers).join(', ')} }, {}, 0`,
    'for name, value in pairs(keyed[1]) do wrk.headers[name] = value end',
  ];
  const { body } = spec;
  if (typeof body === 'string') lines.push(`wrk.body = ${lua(body)}`);
  if (typeof body === 'object') {
    lines.push(
      `local before, after, run = ${lua(body.before)}, ${lua(body.after)}, ${lua(`w${++runCounter}_`)}`,
    );
  }
  if (typeof body === 'object' || keys.length > 1) {
    // wrk.format fills in Host (from wrk.headers) and Content-Length.
    lines.push(
      'function request()',
      '  n = n + 1',
      '  local i = n % #keyed + 1',
      '  if run ~= nil then return wrk.format(nil, nil, keyed[i], before .. run .. n .. after) end',
      '  if built[i] == nil then built[i] = wrk.format(nil, nil, keyed[i], nil) end',
      '  return built[i]',
      'end',
    );
  }
  if (pace !== undefined) lines.push(`function delay() return ${Math.round(1000 / pace)} end`);
  lines.push(
    // One thread (-t1): its counters are read back from it once the run is done.
    'local thread',
    'function setup(t) thread = t end',
    'function init(args) non2xx = 0; graphqlErrors = 0 end',
    'function response(status, headers, body)',
    '  if status < 200 or status > 299 then non2xx = non2xx + 1',
    `  elseif body ~= nil and string.find(body, ${lua(ERRORS_KEY)}, 1, true) then graphqlErrors = graphqlErrors + 1 end`,
    'end',
    'function done(summary, latency, requests)',
    '  local e = summary.errors',
    `  io.write(${lua(RESULT_MARKER)}, string.format(`,
    `    ${lua('{"requests":%d,"micros":%d,"p50":%d,"p99":%d,"errors":%d,"non2xx":%d,"graphqlErrors":%d}')},`,
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),',
    '    e.connect + e.read + e.write + e.timeout, thread:get("non2xx"), thread:get("graphqlErrors")), "\\n")',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

const execFileAsync = promisify(execFile);

/** Runs wrk once, for whole seconds (its resolution), with a timeout of 10 s as autocannon's. */
async function runWrk(wrk: string, load: Load): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-wrk-'));
  const script = join(dir, 'load.lua');
  writeFileSync(script, wrkScript(load.spec, load.keys, load.pace));
  const args = ['-t1', `-c${load.connections}`, `-d${Math.max(1, Math.ceil(load.seconds))}s`];
  args.push('--timeout', '10s', '-s', script, load.url);
  try {
    const cpuBefore = reapedChildrenCpuMicros();
    // execFile settles once the child is waited for: its CPU is then in our reaped-children account.
    const { stdout } = await execFileAsync(wrk, args).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`wrk ${args.join(' ')} failed:\n${error.stdout ?? ''}${error.stderr ?? error}`);
    });
    const cpuAfter = reapedChildrenCpuMicros();
    const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARKER));
    if (line === undefined) throw new Error(`wrk ${args.join(' ')}: no result line:\n${stdout}`);
    const result = JSON.parse(line.slice(RESULT_MARKER.length));
    return {
      generator: 'wrk',
      requests: result.requests,
      seconds: result.micros / 1e6,
      p50Ms: result.p50 / 1000,
      p99Ms: result.p99 / 1000,
      errors: result.errors,
      non2xx: result.non2xx,
      graphqlErrors: result.graphqlErrors,
      generatorCpuMicros:
        cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : cpuAfter - cpuBefore,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
