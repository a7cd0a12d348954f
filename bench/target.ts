/**
 * One bench target's process: `node bench/target.ts <kind>`, announcing its URL over IPC
 * (child.ts). The hops read UPSTREAM_URL (ending in /v1); the upstreams BENCH_API_KEYS
 * (comma-separated). Each kind imports only its own modules, so no target's memory holds another's
 * code. For a CPU profile by hand: start `bench/target.ts gateway` under `--cpu-prof` with
 * UPSTREAM_URL set, load it, then Ctrl-C.
 */
import type { StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Watched } from '../test/support/process.ts';
import { announce, processMemory, requireEnv, treeMemory } from './child.ts';

async function listenLoopback(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Keep-alive as the gateway's own server has it (65 s). */
function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  server.keepAliveTimeout = 65_000;
  return listenLoopback(server);
}

const upstreamUrl = () => new URL(requireEnv('UPSTREAM_URL'));
const apiKeys = () => requireEnv('BENCH_API_KEYS').split(',');

/**
 * Runs the program this target stands for (Tailcall's binary, the gateway's primary) on a free
 * port, in this process's group so a SIGKILL to the group takes it too, and resolves once `path`
 * answers `init` with a 2xx; if the program exits, so does the target, saying why.
 */
async function runProgram(
  what: string,
  command: (port: number) => { argv: string[]; env: Record<string, string> },
  stdio: StdioOptions,
  path: string,
  init?: RequestInit,
): Promise<{ origin: string; program: Watched }> {
  // Loaded here: the other targets' memory holds nothing they do not use.
  const { spawnWatched } = await import('../test/support/process.ts');
  const { freePort } = await import('../test/support/ports.ts');
  const port = await freePort();
  const { argv, env } = command(port);
  const [file = '', ...args] = argv;
  const program = spawnWatched(file, args, {
    env,
    stdio,
    inheritEnv: true,
    ownGroup: false,
    outputLimit: 16_384,
  });
  void program.exited.then((code) => {
    process.stderr.write(`${what} exited (${program.child.signalCode ?? code}):\n${program.output()}\n`);
    process.exit(1);
  });
  const origin = `http://127.0.0.1:${port}`;
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    try {
      const response = await fetch(origin + path, init);
      await response.arrayBuffer();
      if (response.ok) return { origin, program };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: no answer at ${origin + path} in time:\n${program.output()}`);
}

const TARGETS: Record<string, () => Promise<void>> = {
  async 'bare-proxy'() {
    const { createBareProxy } = await import('./hops.ts');
    announce(await serve(createBareProxy(upstreamUrl())));
  },
  async 'json-hop'() {
    const { createJsonHop } = await import('./hops.ts');
    announce(await serve(createJsonHop(upstreamUrl())));
  },
  /** composeGateway as src/main.ts calls it, metrics on as by default: they cost per request. */
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
   * `WORKERS=2 npm start`: src/main.ts with this process's Node flags, a primary and two workers,
   * measured as one process tree; log lines to /dev/null, as the single gateway's are read away.
   */
  async 'gateway-workers'() {
    const main = new URL('../src/main.ts', import.meta.url).pathname;
    const { origin, program } = await runProgram(
      'the gateway (WORKERS=2)',
      (port) => ({
        argv: [process.execPath, ...process.execArgv, main],
        env: { UPSTREAM_URL: upstreamUrl().href, WORKERS: '2', PORT: String(port), HOST: '127.0.0.1' },
      }),
      ['ignore', 'ignore', 'pipe'],
      '/health',
    );
    announce(`${origin}/graphql`, { memory: treeMemory(program.child.pid as number) });
  },
  /** Tailcall's binary (tailcall.ts): its CPU counted with this process's, its memory alone. */
  async tailcall() {
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { TAILCALL_LOG_ENV, tailcallBinary, tailcallConfig } = await import('./tailcall.ts');
    const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-bench-tailcall-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const config = join(dir, 'pets.graphql');
    const { origin, program } = await runProgram(
      'tailcall',
      (port) => {
        writeFileSync(config, tailcallConfig(upstreamUrl(), port));
        return { argv: [tailcallBinary(), 'start', config], env: TAILCALL_LOG_ENV };
      },
      ['ignore', 'pipe', 'pipe'],
      '/graphql',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' },
    );
    announce(`${origin}/graphql`, { memory: processMemory(program.child.pid as number) });
  },
  async 'hive-mesh'() {
    const { createHiveMesh } = await import('./hive-mesh.ts');
    announce(`${await serve(await createHiveMesh(upstreamUrl()))}/graphql`);
  },
  /** BENCH_PET_IDS `small` (default) or `int64` (ids beyond 2^53). */
  async 'static-upstream'() {
    const { createStaticUpstream } = await import('./static-upstream.ts');
    const upstream = createStaticUpstream(
      apiKeys(),
      process.env.BENCH_PET_IDS === 'int64' ? 'int64' : 'small',
    );
    const counts = () => ({ calls: upstream.calls(), keysSeen: upstream.takeKeysSeen() });
    announce(`${await serve(upstream.handler)}/v1`, { counts });
  },
  /**
   * The reference service. It takes one configured key only, so several are stored, hashed, in a
   * database file (as `npm run petstore -- keys create` stores them): every request pays its lookup.
   */
  async petstore() {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { hashApiKey } = await import('../src/petstore/keys.ts');
    const { startPetstore } = await import('../src/petstore/server.ts');
    const { openStorage } = await import('../src/petstore/storage.ts');
    const keys = apiKeys();
    if (keys.length === 1) {
      return announce((await startPetstore({ dbPath: ':memory:', apiKey: keys[0] as string, port: 0 })).url);
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
