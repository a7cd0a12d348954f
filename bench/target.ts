/**
 * One bench target's process: `node bench/target.ts <kind>`. Every target runs in a process of its
 * own so its CPU and memory are its own; it announces its URL over IPC (child.ts). The hops read
 * UPSTREAM_URL (ending in /v1); the upstreams read BENCH_API_KEYS (comma-separated).
 *
 * Each kind imports only its own modules, so no target's memory holds another's code. For a CPU
 * profile: `npm run bench -- --profile`, or start `bench/target.ts gateway` by hand under
 * `--cpu-prof` with UPSTREAM_URL set, load it, then Ctrl-C.
 */

import type { StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Watched } from '../test/support/process.ts';
import { announce, processMemory, requireEnv, requireKeys, treeMemory } from './child.ts';

/** Listens on a free loopback port and returns the origin. */
async function listenLoopback(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A handler on a free loopback port, keep-alive as the gateway's own server has it (65 s). */
function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  server.keepAliveTimeout = 65_000;
  return listenLoopback(server);
}

/** A loopback port free right now, for a program that must be told its port (Tailcall, `npm start`). */
async function freePort(): Promise<number> {
  const server = createServer();
  const origin = await listenLoopback(server);
  await new Promise((resolve) => server.close(resolve));
  return Number(new URL(origin).port);
}

const upstreamUrl = () => new URL(requireEnv('UPSTREAM_URL'));

/**
 * A program this target stands for (Tailcall's binary, the gateway's primary), in this process's
 * group so the bench's SIGKILL to the group takes it too. Without it the target has nothing to
 * measure: when it exits, the target says why and goes, so the bench sees it.
 */
async function runProgram(
  what: string,
  [command, ...args]: string[],
  env: Record<string, string>,
  stdio: StdioOptions,
): Promise<Watched> {
  // Loaded here, not at the top: the other targets' memory holds nothing they do not use.
  const { spawnWatched } = await import('../test/support/process.ts');
  const program = spawnWatched(command as string, args, {
    env,
    stdio,
    inheritEnv: true,
    ownGroup: false,
    outputLimit: 16_384,
    name: what,
  });
  void program.exited.then((code) => {
    process.stderr.write(`${what} exited (${program.child.signalCode ?? code}):\n${program.output()}\n`);
    process.exit(1);
  });
  return program;
}

/** Resolves once `url` answers `init` with a 2xx, fails after 20 s or when `program` has exited. */
async function untilAnswers(url: string, program: Watched, init?: RequestInit): Promise<void> {
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    if (program.child.exitCode !== null) break;
    try {
      const response = await fetch(url, init);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no answer at ${url} in time:\n${program.output()}`);
}

const TARGETS: Record<string, () => Promise<void>> = {
  /** The cheapest Node hop: bytes passed through (hops.ts). */
  async 'bare-proxy'() {
    const { createBareProxy } = await import('./hops.ts');
    announce(await serve(createBareProxy(upstreamUrl())));
  },
  /** The bare hop, but parsing, mapping and re-serialising the JSON (hops.ts). */
  async 'json-hop'() {
    const { createJsonHop } = await import('./hops.ts');
    announce(await serve(createJsonHop(upstreamUrl())));
  },
  /**
   * The gateway as `src/main.ts` composes it (composeGateway with the config's defaults), metrics
   * on as main.ts has them by default: they cost per request, so it is measured with them.
   */
  async gateway() {
    upstreamUrl();
    const { loadConfig } = await import('../src/config.ts');
    const { composeGateway } = await import('../src/gateway.ts');
    const { createLogger } = await import('../src/observability/logging.ts');
    const { createMetrics } = await import('../src/observability/metrics.ts');
    const config = loadConfig(process.env);
    const metrics = config.metrics ? createMetrics() : undefined;
    const { server } = composeGateway(config, {
      upstreamUrl: config.upstreamUrl as URL,
      logger: createLogger(config.logLevel),
      ...(metrics ? { metrics } : {}),
    });
    announce(`${await listenLoopback(server)}/graphql`);
  },
  /**
   * The gateway as `WORKERS=2 npm start` runs it: src/main.ts, a primary and two node:cluster
   * workers sharing one port, with this process's Node flags (the gateway's) passed on to them. Its
   * CPU is the whole process tree's; its memory the tree's RSS summed, sampled. Log lines go to
   * /dev/null, as for the single-process gateway.
   */
  async 'gateway-workers'() {
    const port = await freePort();
    const main = new URL('../src/main.ts', import.meta.url).pathname;
    const gateway = await runProgram(
      'the gateway (WORKERS=2)',
      [process.execPath, ...process.execArgv, main],
      { UPSTREAM_URL: upstreamUrl().href, WORKERS: '2', PORT: String(port), HOST: '127.0.0.1' },
      ['ignore', 'ignore', 'pipe'],
    );
    const origin = `http://127.0.0.1:${port}`;
    await untilAnswers(`${origin}/health`, gateway);
    announce(`${origin}/graphql`, { memory: treeMemory(gateway.child.pid as number) });
  },
  /**
   * Tailcall (tailcall.ts) over the upstream. This Node process only writes the config, starts the
   * binary and answers the bench; its CPU is counted with the binary's, but the memory it reports is
   * the binary's alone.
   */
  async tailcall() {
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { TAILCALL_LOG_ENV, tailcallBinary, tailcallConfig } = await import('./tailcall.ts');
    const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-bench-tailcall-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const config = join(dir, 'pets.graphql');
    writeFileSync(config, tailcallConfig(upstreamUrl(), port));
    const binary = await runProgram('tailcall', [tailcallBinary(), 'start', config], TAILCALL_LOG_ENV, [
      'ignore',
      'pipe',
      'pipe',
    ]);
    const url = `http://127.0.0.1:${port}/graphql`;
    await untilAnswers(url, binary, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{ __typename }"}',
    });
    announce(url, { memory: processMemory(binary.child.pid as number) });
  },
  /** Hive Gateway + a GraphQL Mesh OpenAPI source (hive-mesh.ts), its supergraph composed once first. */
  async 'hive-mesh'() {
    const { composeSupergraph, hiveGateway, hiveLogger } = await import('./hive-mesh.ts');
    const log = hiveLogger();
    const gateway = hiveGateway(await composeSupergraph(upstreamUrl(), log), log);
    announce(`${await serve(gateway)}/graphql`);
  },
  /** The static upstream; BENCH_PET_IDS `small` (default) or `int64` (ids beyond 2^53). */
  async 'static-upstream'() {
    const { createStaticUpstream } = await import('./static-upstream.ts');
    const ids = process.env.BENCH_PET_IDS === 'int64' ? 'int64' : 'small';
    const upstream = createStaticUpstream(requireKeys(), ids);
    announce(`${await serve(upstream.handler)}/v1`, {
      calls: upstream.calls,
      keysSeen: upstream.takeKeysSeen,
    });
  },
  /**
   * The reference REST service. One key: an in-memory database with that key configured
   * (PETSTORE_API_KEY's path). Several: the service takes one configured key only, so every key is
   * stored, hashed, in a database file in a temporary directory (removed on exit), as
   * `npm run petstore -- keys create` stores them; every request then pays the service's own lookup.
   */
  async petstore() {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { hashApiKey } = await import('../src/petstore/keys.ts');
    const { startPetstore } = await import('../src/petstore/server.ts');
    const { openStorage } = await import('../src/petstore/storage.ts');
    const keys = requireKeys();
    if (keys.length === 1) {
      const petstore = await startPetstore({ dbPath: ':memory:', apiKey: keys[0] as string, port: 0 });
      return announce(petstore.url);
    }
    const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-bench-petstore-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'petstore.db');
    const storage = openStorage(dbPath);
    for (const key of keys) storage.addKey('bench', hashApiKey(key));
    storage.close();
    announce((await startPetstore({ dbPath, port: 0 })).url);
  },
};

const kind = process.argv[2] ?? '';
const start = TARGETS[kind];
if (start === undefined) {
  console.error(`bench/target.ts: unknown target "${kind}" (${Object.keys(TARGETS).join(', ')})`);
  process.exit(2);
}
await start();
