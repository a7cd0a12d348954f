// @tier ci: the bench harness as processes, every target and workload, two minutes of starting peers; it asserts what ran and was printed, never a figure

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findWrk } from '../../bench/load.ts';
import { allowedCpus, choosePinning, cpuList, type Pinning } from '../../bench/pinning.ts';
import { WORKLOADS } from '../../bench/workloads.ts';

/** Runs `node bench/run.ts <args>` as `npm run bench` does; resolves with its exit code and output. */
function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/run.ts', ...args], {
      cwd: new URL('../..', import.meta.url),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The cells of the first table row whose first cells are `first`. */
function row(stdout: string, ...first: string[]): string[] | undefined {
  return stdout
    .split('\n')
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .find((cells) => first.every((value, i) => cells[i + 1] === value))
    ?.slice(1, -1);
}

/**
 * The `answer` column each target must show: `ok`, but for hive-mesh on list20-bigids, where Mesh
 * reads the contract's int64 ids (JSON numbers) into doubles before its BigInt scalar sees them, so
 * they come back rounded: the peer's wrong answer is measured and flagged.
 */
const expectedAnswer = (workload: string, target: string) =>
  workload === 'list20-bigids' && target === 'hive-mesh' ? 'WRONG' : 'ok';

/** A ratio cell: one round's value, or a median with its range. */
const RATIO = /^\d+\.\d\d( \(\d+\.\d\d–\d+\.\d\d\))?$/;

// A benchmark, not a timed test: this only checks that the harness runs and reports what it should.
describe('npm run bench -- --smoke', () => {
  it('runs every workload on every target, prints the table, the ratios and the goals, and exits 0', async () => {
    const { code, stdout, stderr } = await runBench(['--smoke', '--keys', '7']);
    expect(code, `${stdout}\n${stderr}`).toBe(0);

    expect(stdout).toMatch(/^command: node bench\/run\.ts --smoke --keys 7$/m);
    // Paced: it checks the harness beside the suite's other files, so it leaves them the cores.
    expect(stdout).toMatch(/^settings: .* 2 connections paced to 100 req\/s each \(a smoke run/m);
    expect(stdout).toMatch(/^keys: 7 bearer keys \(bench-key-0 … bench-key-6\) taken in turn/m);
    expect(stdout).toMatch(/^date: \d{4}-\d\d-\d\dT.* node: v\d+\.\d+\.\d+ .*cpu: /m);
    // Whichever generator is installed: CI installs wrk, a machine without it falls back, saying so.
    const wrk = findWrk() !== undefined;
    expect(stdout).toMatch(
      wrk ? /^load: wrk .*list20-steady: autocannon/m : /^load: autocannon .*wrk is not on PATH/m,
    );
    expect(stdout).toMatch(
      /^\| workload \| upstream \| target \| req\/s \| CPU µs\/req \| p50 ms \| p99 ms \| errors \|/m,
    );

    for (const workload of WORKLOADS) {
      for (const target of Object.keys(workload.targets)) {
        const cells = row(stdout, workload.name, workload.upstream, target);
        expect(cells, `row ${workload.name} ${target}`).toBeDefined();
        const [, , , rps, cpu, p50, p99, errors, non2xx, graphqlErrors] = cells ?? [];
        expect(Number(rps)).toBeGreaterThan(0);
        // Each connection paced to 100 req/s, whichever generator: a bound the load cannot pass.
        const connections = workload.connections ?? 2;
        expect(Number(rps), `${workload.name} ${target} paced`).toBeLessThanOrEqual(connections * 100 * 1.2);
        expect(Number(cpu), `${workload.name} ${target} CPU µs/req`).toBeGreaterThan(0);
        expect(Number(p50)).toBeGreaterThanOrEqual(0);
        expect(Number(p99)).toBeGreaterThanOrEqual(0);
        expect([errors, non2xx, graphqlErrors].every((n) => /^\d+$/.test(n ?? ''))).toBe(true);
        // No timing assertion, but a target that answers wrongly is a broken harness.
        expect(Number(non2xx) + Number(graphqlErrors), `${workload.name} ${target} failures`).toBe(0);
        expect(cells?.[13]).toBe(wrk && workload.rate === undefined ? 'wrk' : 'autocannon');
        // Each caller's own key reached the upstream through every hop (the reference service
        // does not count them): nothing keyed by caller could merge the load into one caller's.
        if (workload.upstream === 'reference') expect(cells?.[15]).toBe('–');
        else expect(Number(cells?.[15]), `${workload.name} ${target} upstream keys`).toBeGreaterThan(1);
        expect(cells?.[16], `${workload.name} ${target} answer`).toBe(expectedAnswer(workload.name, target));
      }
      const hops = ['gateway', 'gateway-yoga', 'json-hop', 'tailcall', 'hive-mesh'] as const;
      for (const hop of hops.filter((h) => workload.targets[h] !== undefined)) {
        const [, , rps, cpu, p99] = row(stdout, workload.name, `${hop} / bare-proxy`) ?? [];
        expect(rps, `${workload.name} ${hop} / bare-proxy req/s`).toMatch(RATIO);
        expect(cpu, `${workload.name} ${hop} / bare-proxy CPU`).toMatch(RATIO);
        // Only a steady rate compares p99, unless the baseline's p99 rounded to 0 ms (autocannon's
        // resolution), where no ratio exists.
        if (workload.rate === undefined) expect(p99).toBe('–');
        else if (Number(row(stdout, workload.name, workload.upstream, 'bare-proxy')?.[6]) > 0)
          expect(p99).toMatch(RATIO);
      }
      expect(row(stdout, workload.name, 'gateway / gateway-yoga')?.[2]).toMatch(RATIO);
      if (workload.targets.tailcall) {
        const [, , rps, cpu] = row(stdout, workload.name, 'gateway / tailcall') ?? [];
        expect(rps, `${workload.name} gateway / tailcall req/s`).toMatch(RATIO);
        expect(cpu, `${workload.name} gateway / tailcall CPU`).toMatch(RATIO);
      }
      if (workload.targets['hive-mesh']) {
        const [, , rps, cpu] = row(stdout, workload.name, 'gateway / hive-mesh') ?? [];
        expect(rps, `${workload.name} gateway / hive-mesh req/s`).toMatch(RATIO);
        expect(cpu, `${workload.name} gateway / hive-mesh CPU`).toMatch(RATIO);
      }
      if (workload.targets.direct) expect(row(stdout, workload.name, 'gateway / direct')?.[2]).toMatch(RATIO);
    }
    // Measured, but flagged under the table with what was wrong, not stopping the bench.
    expect(stdout).toMatch(/^- list20-bigids hive-mesh answered wrongly: ids differ from the upstream's: /m);
    expect(row(stdout, 'cold', 'gateway cold / gateway warm')?.[2]).toMatch(RATIO);
    // Tailcall, the peer of the headline goals, ran on list20 with the keys rotating.
    expect(Number(row(stdout, 'list20', 'static', 'tailcall')?.[15])).toBeGreaterThan(1);
    const goals = stdout.slice(stdout.indexOf('\ngoals ('));
    for (const goal of [
      /^- list20: gateway CPU\/req \d+\.\d\d× json-hop's \(goal ≤ 1\.25×\) (PASS|FAIL)$/m,
      /^- list20: gateway CPU\/req \d+\.\d\d× tailcall's \(reported, no goal\)$/m,
      /^- list20: gateway req\/s \d+\.\d\d× tailcall's \(goal ≥ 0\.80×\) (PASS|FAIL)$/m,
      /^- batch5: gateway CPU per batch \d+\.\d\d× one list20's \(goal ≤ 5\.00×\) (PASS|FAIL)$/m,
      /^- list20: gateway CPU\/req \d+\.\d\d× gateway-warn's \(LOG_LEVEL=warn; goal ≤ 1\.05×\) (PASS|FAIL)$/m,
      /^- list20-bigids: gateway CPU\/req \d+\.\d\d× tailcall's /m,
      /^- list20-bigids: gateway req\/s \d+\.\d\d× tailcall's /m,
      /^- list20: gateway req\/s \d+\.\d\d× hive-mesh's \(goal ≥ 10\.00×\) (PASS|FAIL)$/m,
      /^- dedup: gateway req\/s \d+\.\d\d× bare-proxy's \(goal ≥ 0\.60×\) (PASS|FAIL)$/m,
      /^- create-pet: gateway req\/s \d+\.\d\d× bare-proxy's \(goal ≥ 0\.45×\) (PASS|FAIL)$/m,
      /^- list20-steady: gateway p99 \d+\.\d\d× bare-proxy's \(goal ≤ 2\.00×\) (PASS|FAIL)$/m,
      /^- list20: gateway peak RSS \d+ MB \(goal ≤ bare-proxy's \d+ MB \+ 48 MB = \d+ MB\) (PASS|FAIL)$/m,
      // The harness itself asserts no failures above, so these two must pass.
      /^- every workload: gateway errors \+ non-2xx \+ GraphQL errors 0 \(goal 0\) PASS$/m,
      /^- dedup: gateway upstream calls\/op 5\.00 \(goal 5\) PASS$/m,
    ]) {
      expect(goals).toMatch(goal);
    }

    // The de-dup workload: 10 aliases over 5 ids must cost exactly 5 upstream calls per operation.
    expect(row(stdout, 'dedup', 'static', 'gateway')?.[12]).toBe('5.00');
    expect(row(stdout, 'list20', 'static', 'gateway')?.[12]).toBe('1.00');
    // WORKERS=2 npm start, measured as a process tree, answered list20 correctly beside Tailcall.
    const workers = row(stdout, 'list20', 'static', 'gateway-workers');
    expect(workers?.[16]).toBe('ok');
    expect(Number(workers?.[3])).toBeGreaterThan(0);
    expect(row(stdout, 'list20', 'gateway-workers / tailcall')?.[2]).toMatch(RATIO);
    // A guard against a hang, not a speed check: the harness bounds each start and each run itself.
    // The smoke is about 48 one-second runs, paced, and 25 process starts: 80 s and 55 CPU-s alone,
    // and up to twice that beside the slow tier's neighbours.
  }, 300_000);

  it('rejects an unknown option with the usage and exit code 2', async () => {
    const { code, stderr } = await runBench(['--rounds', 'zero']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--rounds must be a positive integer/);
    expect(stderr).toMatch(/Usage: npm run bench/);
  });

  it('rejects a key count that is not a positive integer', async () => {
    const { code, stderr } = await runBench(['--keys', '0']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--keys must be a positive integer, got "0"/);
  });

  it('passes only Node flags to the gateway process', async () => {
    const { code, stderr } = await runBench(['--gateway-node-args=--max-old-space-size=128; rm -rf /']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--gateway-node-args takes Node flags/);
  });

  it('refuses a --baseline that is not a checkout of this project', async () => {
    const { code, stderr } = await runBench(['--baseline', tmpdir()]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--baseline .*: no bench\/target\.ts there/);
  });
});

describe('rounds on new processes, on CPUs of their own', () => {
  const runsOf = async (workload: string, extra: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-rounds-'));
    try {
      const json = join(dir, 'runs.json');
      const args = ['--smoke', '--rounds', '2', '--workload', workload, '--json', json, ...extra];
      const { code, stdout, stderr } = await runBench(args);
      expect(code, `${stdout}\n${stderr}`).toBe(0);
      const { runs } = JSON.parse(readFileSync(json, 'utf8')) as {
        runs: Array<{ target: string; round: number; pid: number; cpus: string }>;
      };
      const pids = new Map<string, number[]>();
      for (const run of runs) pids.set(run.target, [...(pids.get(run.target) ?? []), run.pid]);
      return { runs, pids, stdout };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  // One run serves two tests: the pinned rounds, and --baseline with this checkout as its own
  // baseline (two gateways from the same code, side by side), each asserting on its own part.
  let pinned: ReturnType<typeof runsOf> | undefined;
  const pinnedWithBaseline = () => {
    pinned ??= runsOf('create-pet', ['--baseline', '.']);
    return pinned;
  };

  it('starts every hop again before each round after the first, pinned by default; the upstream keeps running', async () => {
    const pin = choosePinning();
    expect(pin, 'this machine can pin (2+ CPUs, taskset)').not.toBeTypeOf('string');
    const { runs, pids, stdout } = await pinnedWithBaseline();
    expect(stdout).toMatch(/every target in its own process, new ones each round \(warmed up again\)/);
    for (const target of ['gateway', 'gateway-yoga', 'bare-proxy', 'json-hop']) {
      const [first, second] = pids.get(target) ?? [];
      expect(first, target).toBeGreaterThan(0);
      expect(second, target).not.toBe(first);
    }
    const [first, second] = pids.get('direct') ?? [];
    expect(second).toBe(first);

    const { targets, load } = pin as Pinning;
    expect(stdout).toContain(
      `CPUs: each target on ${targets}; the load generator, upstream and log readers on ${load}`,
    );
    expect(runs.length).toBeGreaterThan(6);
    for (const run of runs) {
      // `direct` is the upstream itself, which the load's CPUs carry.
      const expected = run.target === 'direct' ? load : targets;
      expect(cpuList(run.cpus), run.target).toEqual(cpuList(expected));
    }
  }, 120_000);

  it('with --baseline runs that checkout’s gateway beside this one and prints the ratio to it', async () => {
    const { stdout } = await pinnedWithBaseline();
    const cells = row(stdout, 'create-pet', 'static', 'gateway-baseline');
    expect(Number(cells?.[3]), 'gateway-baseline req/s').toBeGreaterThan(0);
    expect(cells?.[16], 'gateway-baseline answer').toBe('ok');
    const ratio = row(stdout, 'create-pet', 'gateway / gateway-baseline');
    expect(ratio?.[2]).toMatch(RATIO);
    expect(ratio?.[3]).toMatch(RATIO);
    expect(ratio?.[5]).toContain('this checkout against --baseline');
    const atOnce = row(stdout, 'create-pet', 'gateway / gateway-baseline at once');
    expect(atOnce?.[3], 'CPU of both under load at the same time').toMatch(RATIO);
    expect(atOnce?.[5]).toContain('at the same time on the same CPUs');
  }, 120_000);

  it('keeps the first round’s processes with --same-processes; --no-pin leaves the CPUs to the scheduler', async () => {
    // cold: the fewest targets that show it (gateway, gateway-yoga, bare-proxy).
    const { runs, pids, stdout } = await runsOf('cold', ['--same-processes', '--no-pin']);
    expect(stdout).toMatch(/every target in its own process, the same ones every round/);
    expect(stdout).toContain(
      'CPUs: the scheduler places targets, load generator and upstream alike (--no-pin)',
    );
    for (const target of ['gateway', 'bare-proxy']) {
      const [first, second] = pids.get(target) ?? [];
      expect(second, target).toBe(first);
    }
    const all = cpuList(allowedCpus(process.pid) ?? '');
    for (const run of runs) expect(cpuList(run.cpus), run.target).toEqual(all);
  }, 120_000);
});
