/**
 * Child process: Tailcall (see tailcall.ts) over the upstream, on a free loopback port. Env:
 * UPSTREAM_URL (ending in /v1). Announces `<origin>/graphql`.
 *
 * This Node process only writes the config, starts the binary and answers the bench's IPC; it is
 * idle under load. Its CPU is counted with the binary's (the bench reads the process tree from
 * /proc), but the memory it reports is the binary's alone: the peak RSS of the tailcall process.
 * The binary is stopped with this process, however it exits short of SIGKILL (the bench kills the
 * whole process group then).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { announce, requireEnv } from './child.ts';
import { freePort } from './listen.ts';
import { processMemory, TAILCALL_LOG_ENV, tailcallBinary, tailcallConfig } from './tailcall.ts';

const READY_TIMEOUT_MS = 10_000;
const POLL_MS = 50;
const OUTPUT_LIMIT = 16_384;

/** Resolves once `url` answers a GraphQL request, rejects when the binary exits first or too late. */
async function waitReady(url: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited()) throw new Error('tailcall exited before it was ready');
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`tailcall did not answer at ${url} within ${READY_TIMEOUT_MS} ms`);
}

const upstreamUrl = new URL(requireEnv('UPSTREAM_URL'));
const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-bench-tailcall-'));
const port = await freePort();
const config = join(dir, 'pets.graphql');
writeFileSync(config, tailcallConfig(upstreamUrl, port));

const binary: ChildProcess = spawn(tailcallBinary(), ['start', config], {
  env: { ...process.env, ...TAILCALL_LOG_ENV },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let output = '';
const keep = (chunk: Buffer) => {
  output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
};
binary.stdout?.on('data', keep);
binary.stderr?.on('data', keep);
let exited = false;
binary.once('exit', (code, signal) => {
  exited = true;
  // Without its binary this target has nothing to measure: say why and go, so the bench sees it.
  process.stderr.write(`tailcall exited (${signal ?? code}):\n${output}\n`);
  process.exit(1);
});
process.on('exit', () => {
  if (!exited) binary.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const url = `http://127.0.0.1:${port}/graphql`;
await waitReady(url, () => exited);
announce(url, { memory: processMemory(binary.pid as number) });
