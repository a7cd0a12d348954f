/**
 * The parent side of the bench's process protocol (child.ts): a target started through the shared
 * harness (test/support/process.ts), its URL and stats read over IPC.
 */
import { spawnWatched } from '../test/support/process.ts';
import type { ChildMessage } from './child.ts';
import { processTreeCpuMicros } from './cpu-time.ts';
import { onTargetCpus, type Pinning } from './pinning.ts';

export type TargetProcess = Awaited<ReturnType<typeof startTarget>>;

/** Every target's process: `node bench/target.ts <kind>`. */
export const TARGET = 'bench/target.ts';

export interface TargetOptions {
  /** Node flags before the file. */
  execArgv?: string[];
  args?: string[];
  /** Its stdout (the gateways' log lines) read by a process of its own; else /dev/null. */
  readStdout?: boolean;
  pin?: Pinning;
}

/**
 * Starts `node <file> [args]` (on the targets' CPUs when pinned) with `env` laid over this
 * environment (undefined removes a variable), and waits for its URL.
 */
export async function startTarget(
  name: string,
  file: string,
  env: Record<string, string | undefined>,
  options: TargetOptions = {},
) {
  // A log reader of its own, as a container runtime's: the gateway pays for every write and the
  // reader's wake-ups as in production, and the reader's CPU is neither the gateway's nor the load's.
  const reader = options.readStdout
    ? spawnWatched('sh', ['-c', 'exec cat > /dev/null'], { stdio: ['pipe', 'ignore', 'ignore'] })
    : undefined;
  const [command, args] = onTargetCpus(options.pin, process.execPath, [
    ...(options.execArgv ?? []),
    file,
    ...(options.args ?? []),
  ]);
  const target = spawnWatched(command, args, {
    env,
    inheritEnv: true,
    name,
    outputLimit: 16_384,
    stdio: ['ignore', reader?.child.stdin ?? 'ignore', 'pipe', 'ipc'],
  });
  // The child holds the pipe's write end now: when it exits, the reader sees the end and exits too.
  reader?.child.stdin?.destroy();
  const waiting: Array<(message: ChildMessage) => void> = [];
  target.child.on('message', (message: ChildMessage) => waiting.shift()?.(message));
  const next = (what: string, timeoutMs: number) =>
    new Promise<ChildMessage>((resolve, reject) => {
      const fail = (why: string) => reject(new Error(`${name}: ${why} ${what}:\n${target.output()}`));
      if (target.child.exitCode !== null || target.child.signalCode !== null) return fail('not running for');
      const timer = setTimeout(() => fail('no answer in time for'), timeoutMs);
      void target.exited.then(() => {
        clearTimeout(timer);
        fail('exited while waiting for');
      });
      waiting.push((message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
  // A hang guard: a start takes a second or two alone, several times that on a loaded machine
  // (the smoke beside the test suite's other files), WORKERS=2 three processes' worth.
  const ready = await next('its URL', 60_000);
  const pid = target.child.pid ?? 0;
  const stats = async () => {
    const answer = next('stats', 5_000);
    if (target.child.connected) target.child.send({ type: 'stats' });
    const { type: _, ...figures } = (await answer) as ChildMessage & { type: 'stats' };
    return figures;
  };
  return {
    /** What the child announced: its base URL. */
    url: (ready as { url: string }).url,
    pid,
    stats,
    /** CPU of its process tree so far in µs, from /proc, else as it reports it. */
    cpuMicros: async () => processTreeCpuMicros(pid) ?? (await stats()).cpuMicros,
    // SIGTERM ends it (and, by its exit, a binary it runs); SIGKILL to its group if it is slow.
    stop: async () => void (await target.stop('SIGTERM', 3_000)),
  };
}
