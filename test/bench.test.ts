import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { listedPets } from '../bench/static-upstream.ts';
import { WORKLOADS } from '../bench/workloads.ts';
import { findWrk } from '../bench/wrk.ts';

/** Runs `node bench/run.ts <args>` as `npm run bench` does; resolves with its exit code and output. */
function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/run.ts', ...args], {
      cwd: new URL('..', import.meta.url),
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

/** A ratio cell: one round's value, or a median with its range. */
const RATIO = /^\d+\.\d\d( \(\d+\.\d\d–\d+\.\d\d\))?$/;

// A benchmark, not a timed test: this only checks that the harness runs and reports what it should.
describe('npm run bench -- --smoke', () => {
  it('runs every workload on every target, prints the table, the ratios and the goals, and exits 0', async () => {
    const { code, stdout, stderr } = await runBench(['--smoke']);
    expect(code, `${stdout}\n${stderr}`).toBe(0);

    expect(stdout).toMatch(/^command: node bench\/run\.ts --smoke$/m);
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
        expect(Number(cpu), `${workload.name} ${target} CPU µs/req`).toBeGreaterThan(0);
        expect(Number(p50)).toBeGreaterThanOrEqual(0);
        expect(Number(p99)).toBeGreaterThanOrEqual(0);
        expect([errors, non2xx, graphqlErrors].every((n) => /^\d+$/.test(n ?? ''))).toBe(true);
        // No timing assertion, but a target that answers wrongly is a broken harness.
        expect(Number(non2xx) + Number(graphqlErrors), `${workload.name} ${target} failures`).toBe(0);
        expect(cells?.[13]).toBe(wrk && workload.rate === undefined ? 'wrk' : 'autocannon');
      }
      const hops = ['gateway', 'gateway-yoga', 'json-hop'] as const;
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
      if (workload.targets.direct) expect(row(stdout, workload.name, 'gateway / direct')?.[2]).toMatch(RATIO);
    }
    expect(row(stdout, 'cold', 'gateway cold / gateway warm')?.[2]).toMatch(RATIO);
    expect(stdout).toMatch(
      /^- gateway: req\/s \d+\.\d\d× \((not )?met\), CPU\/req \d+\.\d\d× \((not )?met\)$/m,
    );
    expect(stdout).toMatch(/^- gateway-yoga: req\/s /m);

    // The de-dup workload: 10 aliases over 5 ids must cost exactly 5 upstream calls per operation.
    expect(row(stdout, 'dedup', 'static', 'gateway')?.[12]).toBe('5.00');
    expect(row(stdout, 'list20', 'static', 'gateway')?.[12]).toBe('1.00');
  }, 120_000);

  it('rejects an unknown option with the usage and exit code 2', async () => {
    const { code, stderr } = await runBench(['--rounds', 'zero']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--rounds must be a positive integer/);
    expect(stderr).toMatch(/Usage: npm run bench/);
  });

  it('passes only Node flags to the gateway process', async () => {
    const { code, stderr } = await runBench(['--gateway-node-args=--max-old-space-size=128; rm -rf /']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--gateway-node-args takes Node flags/);
  });
});

describe('list20-bigids', () => {
  const workload = WORKLOADS.find((w) => w.name === 'list20-bigids');
  const pets = listedPets('int64', 20);
  // What a hop that parsed the ids into doubles would send: the nearest double, printed.
  const rounded = (id: string) => String(Number(id));

  it('accepts the ids exactly and rejects them rounded, in the gateway answer', () => {
    const answer = (id: (text: string) => string) =>
      JSON.stringify({
        data: {
          pets: pets.map((p) => ({
            id: id(p.id),
            name: p.name,
            categoryId: p.categoryId,
            status: p.status.toUpperCase(),
          })),
        },
      });
    const check = workload?.targets.gateway?.check;
    expect(
      check?.(
        200,
        answer((id) => id),
      ),
    ).toBeUndefined();
    expect(check?.(200, answer(rounded))).toMatch(/ids differ/);
  });

  it('reads int64 numbers in a REST answer from their source text', () => {
    const answer = (id: (text: string) => string) =>
      `[${pets.map((p) => `{"id":${id(p.id)},"name":"${p.name}","categoryId":${p.categoryId},"status":"${p.status}"}`).join(',')}]`;
    const check = workload?.targets['bare-proxy']?.check;
    expect(
      check?.(
        200,
        answer((id) => id),
      ),
    ).toBeUndefined();
    expect(check?.(200, answer(rounded))).toMatch(/ids differ/);
  });
});
