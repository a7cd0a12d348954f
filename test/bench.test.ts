import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { WORKLOADS } from '../bench/workloads.ts';

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

/** The table's cells of the row for one workload and target. */
function row(stdout: string, workload: string, target: string): string[] | undefined {
  return stdout
    .split('\n')
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .find((cells) => cells[1] === workload && cells[3] === target)
    ?.slice(1, -1);
}

// A benchmark, not a timed test: this only checks that the harness runs and reports what it should.
describe('npm run bench -- --smoke', () => {
  it('runs every workload on every target, prints the table and the ratios, and exits 0', async () => {
    const { code, stdout, stderr } = await runBench(['--smoke']);
    expect(code, `${stdout}\n${stderr}`).toBe(0);

    expect(stdout).toMatch(/^command: node bench\/run\.ts --smoke$/m);
    expect(stdout).toMatch(/^date: \d{4}-\d\d-\d\dT.* node: v\d+\.\d+\.\d+ .*cpu: /m);
    expect(stdout).toMatch(/^\| workload \| upstream \| target \| req\/s \| p50 ms \| p99 ms \| errors \|/m);

    for (const workload of WORKLOADS) {
      for (const target of Object.keys(workload.targets)) {
        const cells = row(stdout, workload.name, target);
        expect(cells, `row ${workload.name} ${target}`).toBeDefined();
        const [, upstream, , rps, p50, p99, errors, non2xx, graphqlErrors] = cells ?? [];
        expect(upstream).toBe(workload.upstream);
        expect(Number(rps)).toBeGreaterThan(0);
        expect(Number(p50)).toBeGreaterThanOrEqual(0);
        expect(Number(p99)).toBeGreaterThanOrEqual(0);
        expect([errors, non2xx, graphqlErrors].every((n) => /^\d+$/.test(n ?? ''))).toBe(true);
        // No timing assertion, but a target that answers wrongly is a broken harness.
        expect(Number(non2xx) + Number(graphqlErrors), `${workload.name} ${target} failures`).toBe(0);
      }
      expect(stdout).toMatch(
        new RegExp(`^ratio ${workload.name}: gateway/bare-proxy \\d+\\.\\d\\d \\[rounds: `, 'm'),
      );
      if (workload.targets.direct) {
        expect(stdout).toMatch(
          new RegExp(`^ratio ${workload.name}: gateway/direct \\d+\\.\\d\\d \\[rounds: `, 'm'),
        );
      }
      // A steady-rate workload also compares p99 latency, unless the baseline's p99 rounded to
      // 0 ms (autocannon's resolution), where no ratio exists.
      if (workload.rate !== undefined && Number(row(stdout, workload.name, 'bare-proxy')?.[5]) > 0) {
        expect(stdout).toMatch(
          new RegExp(
            `^ratio ${workload.name}: gateway/bare-proxy p99 latency \\d+\\.\\d\\d \\[rounds: `,
            'm',
          ),
        );
      }
    }
    expect(stdout).toMatch(/^ratio cold: gateway-cold\/gateway-warm \d+\.\d\d/m);

    // The de-dup workload: 10 aliases over 5 ids must cost exactly 5 upstream calls per operation.
    expect(row(stdout, 'dedup', 'gateway')?.at(-1)).toBe('5.00');
    expect(row(stdout, 'list20', 'gateway')?.at(-1)).toBe('1.00');
  }, 60_000);

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
