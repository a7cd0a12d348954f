/**
 * The report's header: what was run, when, on what machine, with which load and keys.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import type { Settings } from './settings.ts';

/** What the report's header says about the run (and --json writes as its meta). */
export interface Meta {
  command: string;
  date: string;
  node: string;
  cpu: string;
  cores: number;
  load: string;
  keys: string;
}

export function printHeader(meta: Meta, settings: Settings): void {
  console.log('# pet-gateway benchmark');
  console.log(`command: ${meta.command}`);
  console.log(`date: ${meta.date}  node: ${meta.node}  cpu: ${meta.cpu} × ${meta.cores}`);
  console.log(
    `settings: ${settings.rounds} round(s) × ${settings.duration} s per target, ${settings.warmup} s warm-up per process, ` +
      `${settings.connections} connections; every target in its own process` +
      (settings.freshProcesses && settings.rounds > 1
        ? ', new ones each round (warmed up again)'
        : ', the same ones every round') +
      (settings.gatewayNodeArgs.length > 0
        ? `; gateway node flags: ${settings.gatewayNodeArgs.join(' ')}`
        : ''),
  );
  console.log(`load: ${meta.load}`);
  console.log(
    settings.pin
      ? `CPUs: each target on ${settings.pin.targets}; the load generator, upstream and log readers on ${settings.pin.load}`
      : `CPUs: the scheduler places targets, load generator and upstream alike (${settings.unpinned})`,
  );
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
}

/** The run's description, from its command line, settings and load generator. */
export function describeRun(
  argv: string[],
  settings: Settings,
  wrk: string | undefined,
  started: Date,
): Meta {
  return {
    command: commandLine(argv),
    date: started.toISOString(),
    node: process.version,
    cpu: cpuModel(),
    cores: availableParallelism(),
    load: describeLoad(wrk, settings),
    keys: describeKeys(settings.keys),
  };
}

function wrkVersion(wrk: string): string {
  // `wrk -v` prints its version line, then the usage, and exits 1.
  const first = spawnSync(wrk, ['-v'], { encoding: 'utf8' }).stdout?.split('\n', 1)[0] ?? '';
  return /^wrk (\S+)/.exec(first)?.[1] ?? 'version unknown';
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
