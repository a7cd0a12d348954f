/** The bench's command line: its options, their defaults and checks, and the Settings a run follows. */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findWrk } from './load.ts';
import { choosePinning } from './pinning.ts';
import { apiKeys, WORKLOADS } from './workloads.ts';

/** Bearer keys per run unless --keys says otherwise: a crowd, as real traffic is (the goals assume it). */
export const DEFAULT_KEYS = 200;

/** Requests per second each connection of a smoke run sends at most. */
const SMOKE_PACE = 100;

export const USAGE = `Usage: npm run bench -- [options]
  --smoke              1 round of 1 s per target, 2 connections paced to ${SMOKE_PACE} req/s each, no warm-up
                       (checks the harness, not the speed)
  --duration <s>       seconds per target per round (default 4)
  --rounds <n>         rounds; targets alternate within each round (default 3), each round on new
                       processes (started again and warmed up), so no process's luck decides a ratio
  --same-processes     every round on the processes of the first (quicker, less fair)
  --no-pin             let the scheduler place every process. By default (Linux, 2+ CPUs, taskset),
                       each target runs on half the CPUs and the load generator, upstream and log
                       readers on the others: a target's CPU per request is then its own work, not its
                       share of a crowded core; --pin insists (an error where it cannot be done)
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
                       Each round also loads both gateways at once on the same CPUs (the row
                       "gateway / gateway-baseline at once"): what the machine does, it does to both
  --gateway-node-args=<flags>  Node flags for the gateway process only (default: those of package.json's
                       start script, as npm start runs it), e.g. --gateway-node-args="--max-semi-space-size=0"
                       for V8's own young-generation size; the other Node targets keep Node's defaults`;

/** What a run follows, parsed from its command line. */
export type Settings = ReturnType<typeof parseSettings>;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** A numeric option: `fallback` when absent, else a positive integer (or with `integer` false, a number ≥ 0). */
export function numberOption(
  name: string,
  raw: string | undefined,
  fallback: number,
  integer = true,
): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < (integer ? 1 : 0) || (integer && !Number.isInteger(value))) {
    throw new UsageError(`--${name} must be a ${integer ? 'positive integer' : 'number ≥ 0'}, got "${raw}"`);
  }
  return value;
}

export function parseSettings(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean', default: false },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      'same-processes': { type: 'boolean', default: false },
      pin: { type: 'boolean' },
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
    allowNegative: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const names = values.workload ?? [];
  const unknown = names.find((name) => !WORKLOADS.some((w) => w.name === name));
  if (unknown !== undefined) throw new UsageError(`unknown workload "${unknown}"`);
  const generator = values.generator as 'auto' | 'wrk' | 'autocannon';
  if (!['auto', 'wrk', 'autocannon'].includes(generator)) {
    throw new UsageError(`--generator must be auto, wrk or autocannon, got "${generator}"`);
  }
  const wrk = generator === 'autocannon' ? undefined : findWrk();
  if (generator === 'wrk' && wrk === undefined) throw new UsageError('--generator wrk: wrk is not on PATH');
  const baseline = values.baseline === undefined ? undefined : resolve(values.baseline);
  if (baseline !== undefined && baselineGateway(baseline) === undefined) {
    throw new UsageError(
      `--baseline ${values.baseline}: no bench/target.ts there (a checkout of this project)`,
    );
  }
  // Pinned unless told not to; where it cannot be done, an error only if --pin asked for it.
  const pinning = values.pin === false ? '--no-pin' : choosePinning();
  if (typeof pinning === 'string' && values.pin === true) throw new UsageError(pinning);
  const smoke = values.smoke;
  return {
    smoke,
    generator,
    /** The wrk binary, when it makes the load (see runLoad). */
    wrk,
    rounds: numberOption('rounds', values.rounds, smoke ? 1 : 3),
    /** Whether each round after the first starts every hop again (see restartHops). */
    freshProcesses: !values['same-processes'],
    /** The CPUs for the targets and for the rest; undefined: the scheduler places all, `unpinned` says why. */
    pin: typeof pinning === 'string' ? undefined : pinning,
    unpinned: typeof pinning === 'string' ? pinning : undefined,
    duration: numberOption('duration', values.duration, smoke ? 1 : 4),
    warmup: numberOption('warmup', values.warmup, smoke ? 0 : 3, false),
    connections: numberOption('connections', values.connections, smoke ? 2 : 50),
    /** Requests per second per connection at most: the smoke's, which checks the harness, not the speed. */
    pace: smoke ? SMOKE_PACE : undefined,
    keys: apiKeys(numberOption('keys', values.keys, DEFAULT_KEYS)),
    workloads: WORKLOADS.filter((w) => names.length === 0 || names.includes(w.name)),
    json: values.json,
    chart: values.chart,
    profile: values.profile,
    gatewayNodeArgs: nodeArgs(values['gateway-node-args'] ?? startFlags()),
    /** Another checkout whose gateway runs beside this one (gateway-baseline). */
    baseline,
  };
}

/** The Node flags of package.json's start script: the gateway is measured as `npm start` runs it. */
function startFlags(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return (manifest.scripts.start as string)
    .split(/\s+/)
    .filter((word) => word.startsWith('--'))
    .join(' ');
}

/** Only `--flag` or `--flag=value` words: this reaches a command line, so nothing else passes. */
function nodeArgs(raw: string): string[] {
  const words = raw.split(/\s+/).filter(Boolean);
  const bad = words.find((word) => !/^--[a-z][a-z0-9-]*(=[\w.,-]+)?$/.test(word));
  if (bad !== undefined) {
    throw new UsageError(`--gateway-node-args takes Node flags like --max-old-space-size=128, got "${bad}"`);
  }
  return words;
}

/**
 * The file and arguments that start the --baseline checkout's gateway: bench/target.ts, or in a
 * checkout from before the targets were one file, its bench/target-gateway.ts.
 */
export function baselineGateway(dir: string): string[] | undefined {
  if (existsSync(join(dir, 'bench/target.ts'))) return [join(dir, 'bench/target.ts'), 'gateway'];
  if (existsSync(join(dir, 'bench/target-gateway.ts'))) return [join(dir, 'bench/target-gateway.ts')];
  return undefined;
}
