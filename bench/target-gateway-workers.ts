/**
 * Child process: the gateway as `WORKERS=2 npm start` runs it (src/main.ts: a primary and two
 * node:cluster workers sharing one port), on a free loopback port. What a user buys per machine,
 * beside Tailcall on the same cores. Env: UPSTREAM_URL (ending in /v1). Announces `<origin>/graphql`.
 * The bench counts the CPU of the whole process tree; memory is the tree's RSS summed, sampled.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { announce, type MemorySource, requireEnv } from './child.ts';
import { childrenOf } from './cpu-time.ts';
import { freePort } from './listen.ts';

const WORKERS = 2;
const READY_TIMEOUT_MS = 20_000;
const POLL_MS = 50;
const OUTPUT_LIMIT = 16_384;

/** RSS of `pid` and every descendant, in bytes. */
function treeRss(pid: number): number {
  let total = 0;
  const pending = [pid];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    try {
      const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${next}/status`, 'utf8'))?.[1];
      total += Number(kb ?? 0) * 1024;
    } catch {
      continue;
    }
    pending.push(...childrenOf(next));
  }
  return total;
}

function treeMemory(pid: number): MemorySource {
  let peak = treeRss(pid);
  setInterval(() => {
    peak = Math.max(peak, treeRss(pid));
  }, POLL_MS).unref();
  return {
    rss: () => treeRss(pid),
    takePeakRss() {
      const now = treeRss(pid);
      const result = Math.max(peak, now);
      peak = now;
      return result;
    },
  };
}

const upstreamUrl = requireEnv('UPSTREAM_URL');
const port = await freePort();
// This process's Node flags (the bench gives it the gateway's, from the start script) go to the
// primary, whose workers inherit them.
const gateway: ChildProcess = spawn(
  process.execPath,
  [...process.execArgv, fileURLToPath(new URL('../src/main.ts', import.meta.url))],
  {
    env: {
      ...process.env,
      UPSTREAM_URL: upstreamUrl,
      WORKERS: String(WORKERS),
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    // Log lines to /dev/null, as for the single-process gateway target.
    stdio: ['ignore', 'ignore', 'pipe'],
  },
);
let output = '';
gateway.stderr?.on('data', (chunk: Buffer) => {
  output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
});
let exited = false;
gateway.once('exit', (code, signal) => {
  exited = true;
  process.stderr.write(`the gateway (WORKERS=${WORKERS}) exited (${signal ?? code}):\n${output}\n`);
  process.exit(1);
});
process.on('exit', () => {
  if (!exited) gateway.kill('SIGKILL');
});

const origin = `http://127.0.0.1:${port}`;
for (const until = Date.now() + READY_TIMEOUT_MS; ; ) {
  try {
    const response = await fetch(`${origin}/health`);
    await response.arrayBuffer();
    if (response.ok) break;
  } catch {}
  if (Date.now() > until) throw new Error(`the gateway did not answer at ${origin} in time:\n${output}`);
  await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}
announce(`${origin}/graphql`, { memory: treeMemory(gateway.pid as number) });
