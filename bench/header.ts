/** The report's header: what was run, when, on what machine, with which load and keys. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import type { Settings } from './settings.ts';

/** What the header says about the run (and --json writes as its meta). */
export type Meta = ReturnType<typeof describeRun>;

export function printHeader(meta: Meta, settings: Settings): void {
  const { rounds, duration, warmup, connections, pace, gatewayNodeArgs, pin } = settings;
  const processes =
    settings.freshProcesses && rounds > 1
      ? 'new ones each round (warmed up again)'
      : 'the same ones every round';
  const flags = gatewayNodeArgs.length > 0 ? `; gateway node flags: ${gatewayNodeArgs.join(' ')}` : '';
  console.log(
    [
      '# pet-gateway benchmark',
      `command: ${meta.command}`,
      `date: ${meta.date}  node: ${meta.node}  cpu: ${meta.cpu} × ${meta.cores}`,
      `settings: ${rounds} round(s) × ${duration} s per target, ${warmup} s warm-up per process, ` +
        `${connections} connections${pace === undefined ? '' : ` paced to ${pace} req/s each (a smoke run: the figures mean nothing)`}; every target in its own process, ${processes}${flags}`,
      `load: ${meta.load}`,
      pin
        ? `CPUs: each target on ${pin.targets}; the load generator, upstream and log readers on ${pin.load}`
        : `CPUs: the scheduler places targets, load generator and upstream alike (${settings.unpinned})`,
      `keys: ${meta.keys}`,
      // Other work on the machine skews every figure; the load average at start says whether there was any.
      `load average at start: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (1, 5, 15 min)`,
      '',
      'workloads:',
      ...settings.workloads.map((w) => `- ${w.name}: ${w.title}`),
      '',
    ].join('\n'),
  );
}

export function describeRun(argv: string[], settings: Settings, started: Date) {
  const args = argv.join(' ');
  const { keys, wrk } = settings;
  const steady = settings.workloads.filter((w) => w.rate !== undefined).map((w) => w.name);
  let load: string;
  if (wrk === undefined) {
    load =
      settings.generator === 'autocannon'
        ? 'autocannon in this process (--generator autocannon)'
        : 'autocannon in this process. Note: wrk is not on PATH; autocannon takes CPU from the targets on ' +
          'a machine with few cores (apt-get install wrk)';
  } else {
    // `wrk -v` prints its version line, then the usage, and exits 1.
    const version = /^wrk (\S+)/.exec(spawnSync(wrk, ['-v'], { encoding: 'utf8' }).stdout ?? '')?.[1];
    load =
      `wrk ${version ?? 'version unknown'}, 1 thread, in its own process` +
      (steady.length > 0
        ? `; ${steady.join(', ')}: autocannon in this process (a fixed rate: wrk has none, and wrk2 is not packaged in Debian)`
        : '');
  }
  return {
    command:
      process.env.npm_lifecycle_event === 'bench'
        ? `npm run bench${args ? ` -- ${args}` : ''}`
        : `node bench/run.ts${args ? ` ${args}` : ''}`,
    date: started.toISOString(),
    node: process.version,
    cpu: cpuModel(),
    cores: availableParallelism(),
    load,
    keys:
      keys.length === 1
        ? `1 bearer key (${keys[0]}) on every request: one caller`
        : `${keys.length} bearer keys (${keys[0]} … ${keys.at(-1)}) taken in turn by successive ` +
          'requests, every upstream accepting each: a crowd of callers',
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
