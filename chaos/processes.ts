import { spawnWatched, type Watched } from '../test/support/process.ts';

/** A process the chaos run started (test/support/process.ts), with its output's tail for a failure message. */
export interface Started extends Watched {
  tail(): string;
}

/** The petstore logs one line per request: only the tail of a process's output is kept. */
const TAIL_CHARS = 8_000;

/** Spawns `node <script>` (this Node) in the repository root, output piped and kept short. */
export function startNode(script: string, env: Record<string, string>, args: string[] = []): Started {
  return startCommand(process.execPath, [script, ...args], env, script);
}

/** Spawns any program (redis-server, nginx) in the repository root, as startNode does. */
export function startCommand(
  program: string,
  args: string[],
  env: Record<string, string>,
  name = program,
): Started {
  const watched = spawnWatched(program, args, { env, name, outputLimit: TAIL_CHARS });
  return { ...watched, tail: watched.output };
}

/**
 * Runs a full garbage collection in a process started with `--inspect=127.0.0.1:0`, through its
 * inspector (the `Debugger listening on ws://…` line it printed). What is left is what the process
 * still holds: a heap read after it is the live heap, not garbage V8 has not got round to yet.
 */
export async function collectGarbage(started: Started): Promise<void> {
  const [, url] = await started.waitFor(/Debugger listening on (ws:\/\/\S+)/);
  const socket = new WebSocket(url as string);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`inspector ${url}: cannot connect`)), {
        once: true,
      });
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector ${url}: no answer`)), 10_000);
      socket.addEventListener('message', (event) => {
        if ((JSON.parse(String(event.data)) as { id?: number }).id !== 1) return;
        clearTimeout(timer);
        resolve();
      });
      socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
  } finally {
    socket.close();
  }
}
