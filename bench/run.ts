/**
 * `npm run bench`: the gateway against a bare Node proxy and the upstream itself, on the static
 * upstream (the gateway is the bottleneck) and on the reference service. Every target runs in its
 * own process; autocannon drives them from this one, target by target in alternating rounds.
 * `npm run bench -- --help` lists the options.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon, { type AutocannonOptions } from 'autocannon';
import { Agent, request } from 'undici';
import { killAll, startTarget, type TargetProcess } from './processes.ts';
import { summariseProfiles } from './profile.ts';
import {
  formatRatio,
  formatTable,
  type Ratio,
  type RunResult,
  ratio,
  type Summary,
  summarise,
} from './report.ts';
import {
  type RequestSpec,
  type TargetKind,
  type UpstreamKind,
  WORKLOADS,
  type Workload,
} from './workloads.ts';

const API_KEY = 'bench-key';
const AUTHORIZATION = `Bearer ${API_KEY}`;
/** Sequential operations sent to count upstream calls per operation exactly. */
const CALLS_CHECK_OPS = 20;
/** A short pause between runs so the previous run's sockets are closed. */
const SETTLE_MS = 200;

const USAGE = `Usage: npm run bench -- [options]
  --smoke              1 round of 1 s per target, 10 connections, no warm-up (checks the harness)
  --duration <s>       seconds per target per round (default 4)
  --rounds <n>         rounds; targets alternate within each round (default 3)
  --warmup <s>         unmeasured seconds per target before the first round (default 1)
  --connections <n>    autocannon connections (default 50)
  --workload <name>    run only this workload; repeatable (${WORKLOADS.map((w) => w.name).join(', ')})
  --json <file>        also write the settings, every run and the summary as JSON
  --profile            run the gateways under --cpu-prof and print their top self-time functions
  --gateway-node-args=<flags>  Node flags for the gateway process only, e.g. --gateway-node-args="--max-old-space-size=128"
                       (to measure a heap cap's effect on RSS and CPU; the bare proxy keeps defaults)`;

interface Settings {
  smoke: boolean;
  rounds: number;
  duration: number;
  warmup: number;
  connections: number;
  workloads: Workload[];
  json: string | undefined;
  profile: boolean;
  gatewayNodeArgs: string[];
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
      workload: { type: 'string', multiple: true },
      json: { type: 'string' },
      profile: { type: 'boolean', default: false },
      'gateway-node-args': { type: 'string' },
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
  const smoke = values.smoke;
  return {
    smoke,
    rounds: number('rounds', values.rounds, smoke ? 1 : 3, true),
    duration: number('duration', values.duration, smoke ? 1 : 4, true),
    warmup: number('warmup', values.warmup, smoke ? 0 : 1, false),
    connections: number('connections', values.connections, smoke ? 10 : 50, true),
    workloads: WORKLOADS.filter((w) => names.length === 0 || names.includes(w.name)),
    json: values.json,
    profile: values.profile,
    gatewayNodeArgs: nodeArgs(values['gateway-node-args']),
  };
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

/** The processes behind one upstream kind; gateway and bare proxy only when a workload needs them. */
interface Stack {
  upstream: TargetProcess;
  gateway?: TargetProcess;
  bareProxy?: TargetProcess;
}

async function startStack(kind: UpstreamKind, workloads: Workload[], settings: Settings): Promise<Stack> {
  const env = { BENCH_API_KEY: API_KEY };
  const upstream =
    kind === 'static'
      ? await startTarget('static upstream', 'bench/target-static-upstream.ts', env)
      : await startTarget('reference service', 'bench/target-petstore.ts', env);
  const mine = workloads.filter((w) => w.upstream === kind);
  const upstreamEnv = { UPSTREAM_URL: upstream.url };
  const gatewayArgs = [
    ...settings.gatewayNodeArgs,
    ...(settings.profile
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${profileDir}`,
          `--cpu-prof-name=gateway-${kind}-${process.pid}.cpuprofile`,
        ]
      : []),
  ];
  const [gateway, bareProxy] = await Promise.all([
    mine.some((w) => w.targets.gateway)
      ? startTarget(`gateway (${kind})`, 'bench/target-gateway.ts', upstreamEnv, gatewayArgs)
      : undefined,
    mine.some((w) => w.targets['bare-proxy'])
      ? startTarget(`bare proxy (${kind})`, 'bench/target-bare-proxy.ts', upstreamEnv)
      : undefined,
  ]);
  return { upstream, ...(gateway ? { gateway } : {}), ...(bareProxy ? { bareProxy } : {}) };
}

const profileDir = join(tmpdir(), `pet-gateway-bench-${process.pid}`);

function processFor(stack: Stack, target: TargetKind): TargetProcess {
  const process =
    target === 'gateway' ? stack.gateway : target === 'bare-proxy' ? stack.bareProxy : stack.upstream;
  if (process === undefined) throw new Error(`no ${target} process`);
  return process;
}

let documentCounter = 0;
const bodyOf = (spec: RequestSpec): string | undefined =>
  typeof spec.body === 'function' ? spec.body(documentCounter++) : spec.body;

const headersOf = (spec: RequestSpec): Record<string, string> =>
  spec.body === undefined
    ? { authorization: AUTHORIZATION }
    : { authorization: AUTHORIZATION, 'content-type': 'application/json' };

const agent = new Agent();

/** One request outside the load, to check the answer is the expected one before measuring it. */
async function sendOnce(url: string, spec: RequestSpec): Promise<void> {
  const response = await request(url, {
    method: spec.method,
    headers: headersOf(spec),
    body: bodyOf(spec) ?? null,
    dispatcher: agent,
  });
  const text = await response.body.text();
  const problem = spec.check(response.statusCode, text);
  if (problem !== undefined) throw new Error(`${spec.method} ${url}: ${problem}`);
}

/** Upstream requests per operation, with nothing else running: exact, unlike a count under load. */
async function upstreamCallsPerOp(stack: Stack, url: string, spec: RequestSpec): Promise<number> {
  const before = (await stack.upstream.stats()).calls ?? 0;
  for (let i = 0; i < CALLS_CHECK_OPS; i++) await sendOnce(url, spec);
  const after = (await stack.upstream.stats()).calls ?? 0;
  return (after - before) / CALLS_CHECK_OPS;
}

function loadOptions(
  url: string,
  spec: RequestSpec,
  duration: number,
  connections: number,
  rate: number | undefined,
): AutocannonOptions {
  const body = spec.body;
  return {
    url,
    connections,
    duration,
    ...(rate === undefined ? {} : { overallRate: rate }),
    method: spec.method,
    headers: headersOf(spec),
    ...(typeof body === 'string' ? { body } : {}),
    ...(typeof body === 'function'
      ? { requests: [{ setupRequest: (req) => ({ ...req, body: body(documentCounter++) }) }] }
      : {}),
    // A 200 carrying GraphQL errors is not a success; REST bodies never contain this key.
    verifyBody: (text) => !text.includes('"errors"'),
  };
}

async function measure(
  stack: Stack,
  workload: Workload,
  target: TargetKind,
  round: number,
  settings: Settings,
): Promise<RunResult> {
  const spec = workload.targets[target] as RequestSpec;
  const proc = processFor(stack, target);
  const isDirect = target === 'direct';
  const before = await proc.stats();
  const upstreamBefore = isDirect ? undefined : await stack.upstream.stats();
  const result = await autocannon(
    loadOptions(
      proc.url + spec.path,
      spec,
      settings.duration,
      workload.connections ?? settings.connections,
      workload.rate,
    ),
  );
  const after = await proc.stats();
  const upstreamAfter = isDirect ? undefined : await stack.upstream.stats();
  const requests = result.requests.total;
  const perRequest = (micros: number) => (requests > 0 ? micros / requests : Number.NaN);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  return {
    workload: workload.name,
    upstream: workload.upstream,
    target,
    round,
    requests,
    rps: requests / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    graphqlErrors: result.mismatches,
    cpuMicrosPerRequest: perRequest(after.cpuMicros - before.cpuMicros),
    upstreamCpuMicrosPerRequest:
      upstreamBefore && upstreamAfter
        ? perRequest(upstreamAfter.cpuMicros - upstreamBefore.cpuMicros)
        : undefined,
    peakRssBytes: after.peakRss,
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

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const settings = parseSettings(argv);
  const started = new Date();
  const meta = {
    command: commandLine(argv),
    date: started.toISOString(),
    node: process.version,
    cpu: cpuModel(),
    cores: availableParallelism(),
  };
  console.log('# pet-gateway benchmark');
  console.log(`command: ${meta.command}`);
  console.log(`date: ${meta.date}  node: ${meta.node}  cpu: ${meta.cpu} × ${meta.cores}`);
  console.log(
    `settings: ${settings.rounds} round(s) × ${settings.duration} s per target, ${settings.warmup} s warm-up, ` +
      `${settings.connections} connections; autocannon in this process, every target in its own process` +
      (settings.gatewayNodeArgs.length > 0
        ? `; gateway node flags: ${settings.gatewayNodeArgs.join(' ')}`
        : ''),
  );
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

  const stacks = new Map<UpstreamKind, Stack>();
  for (const kind of ['static', 'reference'] as const) {
    if (settings.workloads.some((w) => w.upstream === kind)) {
      stacks.set(kind, await startStack(kind, settings.workloads, settings));
    }
  }

  const runs: RunResult[] = [];
  const summaries: Summary[] = [];
  const ratios: Ratio[] = [];
  try {
    for (const workload of settings.workloads) {
      const stack = stacks.get(workload.upstream) as Stack;
      const targets = Object.keys(workload.targets) as TargetKind[];
      const callsPerOp = new Map<TargetKind, number>();
      for (const target of targets) {
        const spec = workload.targets[target] as RequestSpec;
        const url = processFor(stack, target).url + spec.path;
        await sendOnce(url, spec);
        if (workload.upstream === 'static')
          callsPerOp.set(target, await upstreamCallsPerOp(stack, url, spec));
        if (settings.warmup > 0) {
          await autocannon(
            loadOptions(
              url,
              spec,
              settings.warmup,
              workload.connections ?? settings.connections,
              workload.rate,
            ),
          );
          await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
        }
      }
      for (let round = 1; round <= settings.rounds; round++) {
        // Rotate the order every round, so no target always runs first (or right after another).
        const order = targets.map((_, i) => targets[(i + round - 1) % targets.length] as TargetKind);
        for (const target of order) {
          const run = await measure(stack, workload, target, round, settings);
          runs.push(run);
          process.stderr.write(
            `  ${workload.name} round ${round} ${target}: ${run.rps.toFixed(0)} req/s, p99 ${run.p99Ms} ms\n`,
          );
        }
      }
      for (const target of targets) {
        summaries.push(
          summarise(
            runs.filter((r) => r.workload === workload.name && r.target === target),
            callsPerOp.get(target),
          ),
        );
      }
      for (const baseline of ['bare-proxy', 'direct'] as const) {
        const r = ratio(
          runs,
          workload.name,
          'gateway',
          baseline,
          baseline === 'bare-proxy' ? workload.baselineNote : undefined,
        );
        if (r !== undefined) ratios.push(r);
        const latency =
          workload.rate === undefined
            ? undefined
            : ratio(runs, workload.name, 'gateway', baseline, undefined, 'p99');
        if (latency !== undefined) ratios.push(latency);
      }
    }
  } finally {
    await Promise.all(
      [...stacks.values()].flatMap((s) => [s.upstream, s.gateway, s.bareProxy]).map((p) => p?.stop()),
    );
    await agent.close();
  }

  // A cold document against the same query warm: what parse + validate cost per request.
  const coldRuns = runs.filter((r) => r.workload === 'cold' && r.target === 'gateway');
  const warmRuns = runs.filter((r) => r.workload === 'list20' && r.target === 'gateway');
  if (coldRuns.length > 0 && warmRuns.length > 0) {
    const rounds = coldRuns.flatMap((cold) => {
      const warm = warmRuns.find((w) => w.round === cold.round);
      return warm ? [cold.rps / warm.rps] : [];
    });
    const sorted = [...rounds].sort((a, b) => a - b);
    ratios.push({
      workload: 'cold',
      name: 'gateway-cold/gateway-warm',
      median: sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN,
      rounds,
      note: 'against list20 gateway of the same round, measured earlier',
    });
  }

  console.log(formatTable(summaries));
  console.log('');
  console.log(
    'req/s, p50, p99, CPU: median of rounds; errors: summed; peak RSS: the target process, highest',
  );
  console.log(
    'sample; CPU µs/req: the target process (direct: the upstream); upstream calls/op: exact, counted',
  );
  console.log(`on the static upstream over ${CALLS_CHECK_OPS} sequential operations.`);
  console.log('');
  console.log('ratios of req/s, and of p99 latency at a steady rate (median of per-round ratios):');
  for (const r of ratios) console.log(formatRatio(r));

  if (settings.profile) {
    console.log('');
    console.log(summariseProfiles(profileDir));
  }
  if (settings.json !== undefined) {
    writeFileSync(
      settings.json,
      `${JSON.stringify({ meta, settings: { ...settings, workloads: settings.workloads.map((w) => w.name) }, summaries, ratios, runs }, null, 2)}\n`,
    );
    console.log(`\nwrote ${settings.json}`);
  }
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
