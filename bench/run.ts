/**
 * `npm run bench`: the gateway (fast lane on and off) against hand-written Node hops (a bare proxy
 * and a JSON-rewriting hop), Tailcall (the fastest peer, a Rust binary), Hive Gateway + GraphQL Mesh
 * (The Guild's REST-to-GraphQL stack, the goal's 10× reference) and the upstream itself, on
 * the static upstream (the hop is the bottleneck) and on the reference service, each request
 * carrying one of --keys bearer keys in turn. Every target runs in its own process; wrk (or,
 * without it, autocannon in this process) drives them, target by target in alternating rounds.
 * `npm run bench -- --help` lists the options.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { headlineChart } from './chart.ts';
import { machineCpuMicros, processTreeCpuMicros } from './cpu-time.ts';
import { nextBody, runLoad } from './load.ts';
import { killAll, startTarget, type TargetProcess } from './processes.ts';
import { summariseProfiles } from './profile.ts';
import {
  formatGoals,
  formatRatios,
  formatTable,
  median,
  type Ratio,
  type RunResult,
  ratio,
  type Summary,
  summarise,
} from './report.ts';
import {
  apiKeys,
  type HopKind,
  headersOf,
  petIdsOf,
  type RequestSpec,
  type TargetKind,
  type UpstreamKind,
  WORKLOADS,
  type Workload,
} from './workloads.ts';
import { findWrk } from './wrk.ts';

/** Bearer keys per run unless --keys says otherwise: a crowd, as real traffic is (the goals assume it). */
const DEFAULT_KEYS = 200;
/** Sequential operations sent to count upstream calls per operation exactly. */
const CALLS_CHECK_OPS = 20;
/** A short pause between runs so the previous run's sockets are closed (not in a smoke run). */
const SETTLE_MS = 200;

const settle = (settings: Settings) =>
  new Promise((resolve) => setTimeout(resolve, settings.smoke ? 0 : SETTLE_MS));

const USAGE = `Usage: npm run bench -- [options]
  --smoke              1 round of 1 s per target, 10 connections, no warm-up (checks the harness)
  --duration <s>       seconds per target per round (default 4)
  --rounds <n>         rounds; targets alternate within each round (default 3)
  --warmup <s>         unmeasured seconds per target before the first round (default 3: a gateway's
                       first seconds are JIT compilation, not its cost per request)
  --connections <n>    connections (default 50)
  --keys <n>           bearer keys the requests of every workload take in turn (default 200): a crowd of
                       callers, so nothing keyed by caller merges their upstream calls; 1 = one caller
  --generator <name>   auto (default: wrk when on PATH, else autocannon), wrk or autocannon;
                       a fixed-rate workload (list20-steady) always uses autocannon
  --workload <name>    run only this workload; repeatable (${WORKLOADS.map((w) => w.name).join(', ')})
  --json <file>        also write the settings, every run and the summary as JSON
  --chart <file>       also draw list20's headline comparison as an SVG chart (docs/performance-list20.svg)
  --profile            run the gateways under --cpu-prof and print their top self-time functions
  --baseline <dir>     also run the gateway of another checkout (with its node_modules, or a link to
                       these), e.g. \`git worktree add ../base main\`, beside this one in every workload
                       with a gateway, and print this checkout's ratios to it: is a change slower?
  --gateway-node-args=<flags>  Node flags for the gateway process only (default: those of package.json's
                       start script, as npm start runs it), e.g. --gateway-node-args="--max-semi-space-size=0"
                       for V8's own young-generation size; the other Node targets keep Node's defaults`;

type GeneratorChoice = 'auto' | 'wrk' | 'autocannon';

interface Settings {
  smoke: boolean;
  generator: GeneratorChoice;
  rounds: number;
  duration: number;
  warmup: number;
  connections: number;
  /** The bearer keys requests rotate through (apiKeys(--keys)). */
  keys: string[];
  workloads: Workload[];
  json: string | undefined;
  chart: string | undefined;
  profile: boolean;
  gatewayNodeArgs: string[];
  /** Another checkout whose gateway runs beside this one (gateway-baseline); undefined: none. */
  baseline: string | undefined;
}

function parseSettings(argv: string[]): Settings {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean', default: false },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      keys: { type: 'string' },
      generator: { type: 'string', default: 'auto' },
      workload: { type: 'string', multiple: true },
      json: { type: 'string' },
      chart: { type: 'string' },
      profile: { type: 'boolean', default: false },
      'gateway-node-args': { type: 'string' },
      baseline: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const number = (name: string, raw: string | undefined, fallback: number, integer: boolean) => {
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < (integer ? 1 : 0) || (integer && !Number.isInteger(value))) {
      throw new UsageError(
        `--${name} must be a ${integer ? 'positive integer' : 'number ≥ 0'}, got "${raw}"`,
      );
    }
    return value;
  };
  const names = values.workload ?? [];
  for (const name of names) {
    if (!WORKLOADS.some((w) => w.name === name)) throw new UsageError(`unknown workload "${name}"`);
  }
  const generator = values.generator as GeneratorChoice;
  if (!['auto', 'wrk', 'autocannon'].includes(generator)) {
    throw new UsageError(`--generator must be auto, wrk or autocannon, got "${generator}"`);
  }
  const smoke = values.smoke;
  const baseline = values.baseline === undefined ? undefined : resolve(values.baseline);
  if (baseline !== undefined && !existsSync(join(baseline, 'bench/target-gateway.ts'))) {
    throw new UsageError(
      `--baseline ${values.baseline}: no bench/target-gateway.ts there (a checkout of this project)`,
    );
  }
  return {
    smoke,
    generator,
    rounds: number('rounds', values.rounds, smoke ? 1 : 3, true),
    duration: number('duration', values.duration, smoke ? 1 : 4, true),
    warmup: number('warmup', values.warmup, smoke ? 0 : 3, false),
    connections: number('connections', values.connections, smoke ? 10 : 50, true),
    keys: apiKeys(number('keys', values.keys, DEFAULT_KEYS, true)),
    workloads: WORKLOADS.filter((w) => names.length === 0 || names.includes(w.name)),
    json: values.json,
    chart: values.chart,
    profile: values.profile,
    gatewayNodeArgs: nodeArgs(values['gateway-node-args'] ?? startFlags().join(' ')),
    baseline,
  };
}

/**
 * The Node flags `npm start` runs the gateway with (package.json's start script): the gateway is
 * measured as it is started, unless --gateway-node-args says otherwise.
 */
function startFlags(): string[] {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  return manifest.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

/** Only `--flag` or `--flag=value` words: this reaches a command line, so nothing else passes. */
function nodeArgs(raw: string | undefined): string[] {
  const words = (raw ?? '').split(/\s+/).filter(Boolean);
  for (const word of words) {
    if (!/^--[a-z][a-z0-9-]*(=[\w.,-]+)?$/.test(word)) {
      throw new UsageError(
        `--gateway-node-args takes Node flags like --max-old-space-size=128, got "${word}"`,
      );
    }
  }
  return words;
}

class UsageError extends Error {
  override name = 'UsageError';
}

/** How each hop target is started: the two gateways differ only in FAST_LANE. */
const HOPS: Record<HopKind, { file: string; env: Record<string, string | undefined>; gateway: boolean }> = {
  // The gateway as configured by default: an inherited FAST_LANE must not choose for it.
  gateway: { file: 'bench/target-gateway.ts', env: { FAST_LANE: undefined }, gateway: true },
  'gateway-yoga': { file: 'bench/target-gateway.ts', env: { FAST_LANE: 'off' }, gateway: true },
  // The default gateway with LOG_LEVEL=warn: what the default log line per operation costs.
  'gateway-warn': {
    file: 'bench/target-gateway.ts',
    env: { FAST_LANE: undefined, LOG_LEVEL: 'warn' },
    gateway: true,
  },
  // src/main.ts itself with WORKERS=2: a primary and two workers, measured as one process tree.
  'gateway-workers': {
    file: 'bench/target-gateway-workers.ts',
    env: { FAST_LANE: undefined },
    gateway: true,
  },
  'bare-proxy': { file: 'bench/target-bare-proxy.ts', env: {}, gateway: false },
  'json-hop': { file: 'bench/target-json-hop.ts', env: {}, gateway: false },
  tailcall: { file: 'bench/target-tailcall.ts', env: {}, gateway: false },
  // At Hive Gateway's defaults: an inherited LOG_LEVEL, which its logger reads, must not choose for it.
  'hive-mesh': { file: 'bench/target-hive-mesh.ts', env: { LOG_LEVEL: undefined }, gateway: false },
  // --baseline's checkout: its own bench/target-gateway.ts (the file is resolved in startStack).
  'gateway-baseline': { file: 'bench/target-gateway.ts', env: { FAST_LANE: undefined }, gateway: true },
};

/** A workload's targets: its own, and the baseline's gateway beside this one's when --baseline is given. */
function targetsOf(workload: Workload, settings: Settings): Partial<Record<TargetKind, RequestSpec>> {
  const { gateway } = workload.targets;
  return settings.baseline !== undefined && gateway !== undefined
    ? { ...workload.targets, 'gateway-baseline': gateway }
    : workload.targets;
}

/** The processes behind one upstream kind: the upstream, and the hops its workloads use. */
interface Stack {
  upstream: TargetProcess;
  hops: Map<HopKind, TargetProcess>;
}

async function startStack(kind: UpstreamKind, workloads: Workload[], settings: Settings): Promise<Stack> {
  const ids = petIdsOf(kind);
  const keys = settings.keys.join(',');
  const upstream =
    ids === undefined
      ? await startTarget('reference service', 'bench/target-petstore.ts', { BENCH_API_KEYS: keys })
      : await startTarget(`${kind} upstream`, 'bench/target-static-upstream.ts', {
          BENCH_API_KEYS: keys,
          BENCH_PET_IDS: ids,
        });
  const needed = new Set(
    workloads
      .filter((w) => w.upstream === kind)
      .flatMap((w) => Object.keys(targetsOf(w, settings)) as TargetKind[])
      .filter((t): t is HopKind => t !== 'direct'),
  );
  const hops = new Map<HopKind, TargetProcess>();
  await Promise.all(
    [...needed].map(async (hop) => {
      const { env, gateway } = HOPS[hop];
      const file =
        hop === 'gateway-baseline' ? join(settings.baseline as string, HOPS[hop].file) : HOPS[hop].file;
      // The workers target's flags reach its primary and workers; profiles are taken of this gateway only.
      const profile =
        hop === 'gateway-workers' || hop === 'gateway-baseline' ? [] : profileArgs(hop, kind, settings);
      const nodeArgs = gateway ? [...settings.gatewayNodeArgs, ...profile] : [];
      hops.set(
        hop,
        await startTarget(`${hop} (${kind})`, file, { ...env, UPSTREAM_URL: upstream.url }, nodeArgs, {
          readStdout: gateway,
        }),
      );
    }),
  );
  return { upstream, hops };
}

async function stopStack(stack: Stack): Promise<void> {
  await Promise.all([stack.upstream, ...stack.hops.values()].map((p) => p.stop()));
}

const profileDir = join(tmpdir(), `pet-gateway-bench-${process.pid}`);

function profileArgs(hop: HopKind, kind: UpstreamKind, settings: Settings): string[] {
  if (!settings.profile) return [];
  return [
    '--cpu-prof',
    `--cpu-prof-dir=${profileDir}`,
    `--cpu-prof-name=${hop}-${kind}-${process.pid}.cpuprofile`,
  ];
}

function processFor(stack: Stack, target: TargetKind): TargetProcess {
  const process = target === 'direct' ? stack.upstream : stack.hops.get(target);
  if (process === undefined) throw new Error(`no ${target} process`);
  return process;
}

const agent = new Agent();

let keyTurn = 0;

/**
 * Targets that are not this checkout's: a wrong answer from one of them is reported beside its
 * figures (and in every ratio to it), not taken for a broken harness. The --baseline checkout may
 * lack a workload's feature (batch5 before batches existed). Tailcall returns ids as JSON
 * numbers, which the checks read from their source text, so it passes them unless it rounds;
 * Hive Gateway + Mesh reads the contract's int64 as BigInt, so it passes them unless it rounds too.
 */
const PEERS: ReadonlySet<TargetKind> = new Set(['tailcall', 'hive-mesh', 'gateway-baseline']);

/**
 * One request outside the load, to check the answer is the expected one before measuring it; the
 * keys rotate across these too, so the operations that count upstream calls are different callers'.
 * Returns what is wrong with the answer; throws for a target of this project (see PEERS).
 */
async function sendOnce(
  url: string,
  target: TargetKind,
  spec: RequestSpec,
  settings: Settings,
): Promise<string | undefined> {
  const key = settings.keys[keyTurn++ % settings.keys.length] as string;
  const response = await request(url, {
    method: spec.method,
    headers: headersOf(spec, key),
    body: nextBody(spec) ?? null,
    dispatcher: agent,
  });
  const text = await response.body.text();
  const problem = spec.check(response.statusCode, text);
  if (problem !== undefined && !PEERS.has(target)) throw new Error(`${spec.method} ${url}: ${problem}`);
  return problem;
}

/** Upstream requests per operation, with nothing else running: exact, unlike a count under load. */
async function upstreamCallsPerOp(
  stack: Stack,
  url: string,
  target: TargetKind,
  spec: RequestSpec,
  settings: Settings,
): Promise<number> {
  const before = (await stack.upstream.stats()).calls ?? 0;
  for (let i = 0; i < CALLS_CHECK_OPS; i++) await sendOnce(url, target, spec, settings);
  const after = (await stack.upstream.stats()).calls ?? 0;
  return (after - before) / CALLS_CHECK_OPS;
}

/** The wrk binary when it is to be used, per --generator. */
function chooseWrk(choice: GeneratorChoice): string | undefined {
  if (choice === 'autocannon') return undefined;
  const wrk = findWrk();
  if (choice === 'wrk' && wrk === undefined) throw new UsageError('--generator wrk: wrk is not on PATH');
  return wrk;
}

function wrkVersion(wrk: string): string {
  // `wrk -v` prints its version line, then the usage, and exits 1.
  const first = spawnSync(wrk, ['-v'], { encoding: 'utf8' }).stdout?.split('\n', 1)[0] ?? '';
  return /^wrk (\S+)/.exec(first)?.[1] ?? 'version unknown';
}

/** Where every process's CPU stood, to take differences across one run. */
interface CpuMark {
  target: number;
  upstream: number | undefined;
  /** This bench, every target, and the exited load generators: what is ours on the machine. */
  ours: number | undefined;
  machine: ReturnType<typeof machineCpuMicros>;
}

async function markCpu(proc: TargetProcess, upstream: TargetProcess | undefined): Promise<CpuMark> {
  return {
    target: await proc.cpuMicros(),
    upstream: upstream === undefined ? undefined : await upstream.cpuMicros(),
    ours: processTreeCpuMicros(process.pid),
    machine: machineCpuMicros(),
  };
}

async function measure(
  stack: Stack,
  workload: Workload,
  target: TargetKind,
  round: number,
  settings: Settings,
  wrk: string | undefined,
): Promise<RunResult> {
  const spec = targetsOf(workload, settings)[target] as RequestSpec;
  const proc = processFor(stack, target);
  const upstream = target === 'direct' ? undefined : stack.upstream;
  // Stats (peak RSS, keys seen) are asked for outside the CPU marks, so answering them is not counted.
  await proc.stats();
  await stack.upstream.stats();
  const before = await markCpu(proc, upstream);
  const load = await runLoad(wrk, {
    url: proc.url + spec.path,
    spec,
    seconds: settings.duration,
    connections: workload.connections ?? settings.connections,
    ...(workload.rate === undefined ? {} : { rate: workload.rate }),
    keys: settings.keys,
  });
  const after = await markCpu(proc, upstream);
  const stats = await proc.stats();
  const upstreamStats = proc === stack.upstream ? stats : await stack.upstream.stats();
  const requests = load.requests;
  const perRequest = (micros: number) => (requests > 0 ? micros / requests : Number.NaN);
  const othersBusy =
    before.machine && after.machine && before.ours !== undefined && after.ours !== undefined
      ? after.machine.busy - before.machine.busy - (after.ours - before.ours)
      : undefined;
  const machineTotal =
    before.machine && after.machine ? after.machine.total - before.machine.total : Number.NaN;
  await settle(settings);
  return {
    workload: workload.name,
    upstream: workload.upstream,
    target,
    round,
    generator: load.generator,
    requests,
    rps: requests / load.seconds,
    p50Ms: load.p50Ms,
    p99Ms: load.p99Ms,
    errors: load.errors,
    non2xx: load.non2xx,
    graphqlErrors: load.graphqlErrors,
    cpuMicrosPerRequest: perRequest(after.target - before.target),
    upstreamCpuMicrosPerRequest:
      before.upstream !== undefined && after.upstream !== undefined
        ? perRequest(after.upstream - before.upstream)
        : undefined,
    generatorCpuMicrosPerRequest: perRequest(load.generatorCpuMicros),
    // Tick resolution can make a quiet machine's figure slightly negative.
    othersCpuShare:
      othersBusy === undefined || !(machineTotal > 0) ? undefined : Math.max(0, othersBusy / machineTotal),
    peakRssBytes: stats.peakRss,
    upstreamKeys: upstreamStats.keysSeen,
  };
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    return line?.split(':')[1]?.trim() ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function commandLine(argv: string[]): string {
  const args = argv.join(' ');
  if (process.env.npm_lifecycle_event === 'bench') return `npm run bench${args ? ` -- ${args}` : ''}`;
  return `node bench/run.ts${args ? ` ${args}` : ''}`;
}

/** Who the requests come from, for the report's header. */
function describeKeys(keys: readonly string[]): string {
  if (keys.length === 1) return `1 bearer key (${keys[0]}) on every request: one caller`;
  return (
    `${keys.length} bearer keys (${keys[0]} … ${keys[keys.length - 1]}) taken in turn by successive ` +
    'requests, every upstream accepting each: a crowd of callers'
  );
}

/** How the load is made, for the report's header. */
function describeLoad(wrk: string | undefined, settings: Settings): string {
  const steady = settings.workloads.filter((w) => w.rate !== undefined).map((w) => w.name);
  if (wrk === undefined) {
    return settings.generator === 'autocannon'
      ? 'autocannon in this process (--generator autocannon)'
      : 'autocannon in this process. Note: wrk is not on PATH; autocannon takes CPU from the targets on ' +
          'a machine with few cores (apt-get install wrk)';
  }
  return (
    `wrk ${wrkVersion(wrk)}, 1 thread, in its own process` +
    (steady.length > 0
      ? `; ${steady.join(', ')}: autocannon in this process (a fixed rate: wrk has none, and wrk2 is not packaged in Debian)`
      : '')
  );
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const settings = parseSettings(argv);
  const wrk = chooseWrk(settings.generator);
  const started = new Date();
  const meta = {
    command: commandLine(argv),
    date: started.toISOString(),
    node: process.version,
    cpu: cpuModel(),
    cores: availableParallelism(),
    load: describeLoad(wrk, settings),
    keys: describeKeys(settings.keys),
  };
  console.log('# pet-gateway benchmark');
  console.log(`command: ${meta.command}`);
  console.log(`date: ${meta.date}  node: ${meta.node}  cpu: ${meta.cpu} × ${meta.cores}`);
  console.log(
    `settings: ${settings.rounds} round(s) × ${settings.duration} s per target, ${settings.warmup} s warm-up, ` +
      `${settings.connections} connections; every target in its own process` +
      (settings.gatewayNodeArgs.length > 0
        ? `; gateway node flags: ${settings.gatewayNodeArgs.join(' ')}`
        : ''),
  );
  console.log(`load: ${meta.load}`);
  console.log(`keys: ${meta.keys}`);
  // Other work on the machine skews every figure; the load average at start says whether there was any.
  console.log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (1, 5, 15 min)`,
  );
  console.log('');
  console.log('workloads:');
  for (const w of settings.workloads) console.log(`- ${w.name}: ${w.title}`);
  console.log('');

  // One upstream kind's processes at a time: started before its first workload, stopped after its
  // last, so idle processes neither share the machine nor hold memory during other workloads.
  const stacks = new Map<UpstreamKind, Stack>();
  const runs: RunResult[] = [];
  const summaries: Summary[] = [];
  const ratios: Ratio[] = [];
  try {
    for (const [index, workload] of settings.workloads.entries()) {
      let stack = stacks.get(workload.upstream);
      if (stack === undefined) {
        stack = await startStack(workload.upstream, settings.workloads, settings);
        stacks.set(workload.upstream, stack);
      }
      await runWorkload(stack, workload, settings, wrk, runs, summaries, ratios);
      if (!settings.workloads.slice(index + 1).some((w) => w.upstream === workload.upstream)) {
        stacks.delete(workload.upstream);
        await stopStack(stack);
      }
    }
  } finally {
    await Promise.all([...stacks.values()].map(stopStack));
    await agent.close();
  }
  ratios.push(...coldOverWarm(runs));

  console.log(formatTable(summaries));
  console.log('');
  console.log(
    'req/s, CPU, p50, p99: median of rounds; errors: summed; CPU µs/req: user + system time of the',
  );
  console.log("target's process tree per request, from /proc (direct: the upstream's); peak RSS: the target");
  console.log(
    "process, highest sample (tailcall: the binary's kernel high-water mark, not its idle Node wrapper's);",
  );
  console.log(`upstream calls/op: exact, counted on the static upstream over ${CALLS_CHECK_OPS} sequential`);
  console.log('operations; generator CPU µs/req: what the load generator itself used, per request;');
  console.log(
    'upstream keys: distinct bearer keys the static upstream received during a run (fewest of the rounds);',
  );
  console.log(
    "answer: the answer checked before the load: ok, or WRONG (a peer's, measured but flagged; see above).",
  );
  const others = runs.flatMap((r) => (r.othersCpuShare === undefined ? [] : [r.othersCpuShare]));
  if (others.length > 0) {
    const percent = (share: number) => `${(100 * share).toFixed(0)}%`;
    console.log(
      `Other processes on the machine used ${percent(median(others))} of its CPU during the median run, ` +
        `${percent(Math.max(...others))} at most: the higher, the less the figures can be trusted.`,
    );
  }
  console.log('');
  console.log('ratios: median of per-round ratios (lowest–highest round); p99 only at a steady rate:');
  console.log(formatRatios(ratios));
  const goals = formatGoals(ratios, summaries);
  if (goals.length > 0) {
    console.log('');
    console.log(
      `goals (issues #43 and #28: medians of this run's rounds, on the static upstream; set for ${DEFAULT_KEYS} keys` +
        (settings.keys.length === DEFAULT_KEYS ? '' : `, this run used ${settings.keys.length}`) +
        '):',
    );
    for (const goal of goals) console.log(goal);
  }

  if (settings.profile) {
    console.log('');
    console.log(summariseProfiles(profileDir));
  }
  console.log('');
  console.log(`took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
  if (settings.chart !== undefined) {
    writeFileSync(
      settings.chart,
      headlineChart(summaries, { caption: `${meta.command}, ${meta.date.slice(0, 16)}Z` }),
    );
    console.log(`\nwrote ${settings.chart}`);
  }
  if (settings.json !== undefined) {
    writeFileSync(
      settings.json,
      `${JSON.stringify({ meta, settings: { ...settings, keys: settings.keys.length, workloads: settings.workloads.map((w) => w.name) }, summaries, ratios, runs }, null, 2)}\n`,
    );
    console.log(`\nwrote ${settings.json}`);
  }
}

/** Checks, counts, warms up and measures one workload on every target, then adds its summaries and ratios. */
async function runWorkload(
  stack: Stack,
  workload: Workload,
  settings: Settings,
  wrk: string | undefined,
  runs: RunResult[],
  summaries: Summary[],
  ratios: Ratio[],
): Promise<void> {
  const specs = targetsOf(workload, settings);
  const targets = Object.keys(specs) as TargetKind[];
  const connections = workload.connections ?? settings.connections;
  const callsPerOp = new Map<TargetKind, number>();
  const wrongAnswers = new Map<TargetKind, string>();
  for (const target of targets) {
    const spec = specs[target] as RequestSpec;
    const url = processFor(stack, target).url + spec.path;
    const problem = await sendOnce(url, target, spec, settings);
    if (problem !== undefined) wrongAnswers.set(target, problem);
    if (petIdsOf(workload.upstream) !== undefined)
      callsPerOp.set(target, await upstreamCallsPerOp(stack, url, target, spec, settings));
    if (settings.warmup > 0) {
      await runLoad(wrk, {
        url,
        spec,
        seconds: settings.warmup,
        connections,
        ...(workload.rate === undefined ? {} : { rate: workload.rate }),
        keys: settings.keys,
      });
      await settle(settings);
    }
  }
  for (let round = 1; round <= settings.rounds; round++) {
    // Rotate the order every round, so no target always runs first (or right after another).
    const order = targets.map((_, i) => targets[(i + round - 1) % targets.length] as TargetKind);
    for (const target of order) {
      const run = await measure(stack, workload, target, round, settings, wrk);
      runs.push(run);
      const others =
        run.othersCpuShare === undefined ? '' : `, others ${(100 * run.othersCpuShare).toFixed(0)}% busy`;
      process.stderr.write(
        `  ${workload.name} round ${round} ${target} (${run.generator}): ${run.rps.toFixed(0)} req/s, ` +
          `${run.cpuMicrosPerRequest.toFixed(0)} µs CPU/req, p99 ${run.p99Ms.toFixed(2)} ms${others}\n`,
      );
    }
  }
  for (const target of targets) {
    summaries.push(
      summarise(
        runs.filter((r) => r.workload === workload.name && r.target === target),
        callsPerOp.get(target),
        wrongAnswers.get(target),
      ),
    );
  }
  const steady = workload.rate !== undefined;
  const add = (
    numerator: TargetKind,
    denominator: TargetKind,
    metrics: Array<'rps' | 'cpu' | 'p99'>,
    note?: string,
  ) => {
    for (const metric of metrics) {
      if (metric === 'p99' && !steady) continue;
      const r = ratio(runs, workload.name, numerator, denominator, metric, note);
      if (r !== undefined) ratios.push(r);
    }
  };
  const wrong = (target: TargetKind) => {
    const problem = wrongAnswers.get(target);
    return problem === undefined ? undefined : `${target} answers wrongly: ${problem}`;
  };
  // The gateway against the floor (bare hop), the floor for rewriting a body (JSON hop), the
  // fastest peer and The Guild's stack, side by side; then each of the others against the bare hop.
  add('gateway', 'bare-proxy', ['rps', 'cpu', 'p99'], workload.baselineNote);
  add('gateway', 'json-hop', ['rps', 'cpu', 'p99']);
  add('gateway', 'tailcall', ['rps', 'cpu', 'p99'], wrong('tailcall'));
  add('gateway', 'hive-mesh', ['rps', 'cpu'], wrong('hive-mesh'));
  for (const hop of ['gateway-yoga', 'json-hop', 'tailcall', 'hive-mesh'] as const) {
    add(hop, 'bare-proxy', ['rps', 'cpu', 'p99'], wrong(hop) ?? workload.baselineNote);
  }
  add('gateway', 'direct', ['rps', 'p99']);
  add('gateway', 'gateway-yoga', ['rps', 'cpu', 'p99'], 'fast lane on / off');
  add('gateway', 'gateway-warn', ['rps', 'cpu', 'p99'], 'LOG_LEVEL info (the default) / warn');
  add(
    'gateway-workers',
    'tailcall',
    ['rps', 'cpu'],
    'WORKERS=2 (both cores) against Tailcall on the same cores',
  );
  add(
    'gateway',
    'gateway-baseline',
    ['rps', 'cpu', 'p99'],
    `this checkout against --baseline ${settings.baseline}`,
  );
}

/** A cold document against the same query warm, per gateway: what parse + validate cost per request. */
function coldOverWarm(runs: readonly RunResult[]): Ratio[] {
  return (['gateway', 'gateway-yoga'] as const).flatMap((target) => {
    const cold = runs.filter((r) => r.workload === 'cold' && r.target === target);
    const warm = runs.filter((r) => r.workload === 'list20' && r.target === target);
    const rounds = cold.flatMap((c) => {
      const w = warm.find((run) => run.round === c.round);
      return w ? [c.rps / w.rps] : [];
    });
    if (rounds.length === 0) return [];
    return [
      {
        workload: 'cold',
        numerator: `${target} cold`,
        denominator: `${target} warm`,
        metric: 'rps' as const,
        median: median(rounds),
        rounds,
        note: 'warm: list20 on the same gateway in the same round, measured earlier',
      },
    ];
  });
}

process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}

try {
  await main();
} catch (error) {
  killAll();
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`bench: ${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    console.error('bench: failed:', error);
    process.exitCode = 1;
  }
}
