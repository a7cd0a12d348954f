import cluster, { type Worker } from 'node:cluster';
import { StartupError } from './start-up-errors.ts';

/** First restart delay after a worker dies; doubled for each further death in a row. */
const RESTART_MIN_MS = 100;
/** The longest a dead worker's slot waits before its next start. */
const RESTART_MAX_MS = 10_000;
/** A worker that lived this long was not crash-looping: its slot's backoff starts over. */
const STABLE_MS = 10_000;
/** Workers force-close their connections after 10 s of draining; this is the primary's backstop. */
const STOP_TIMEOUT_MS = 15_000;

/** What a worker sends the primary when the environment refuses its start (port taken, …). */
export const STARTUP_FAILED = 'pet-gateway:startup-failed';

export interface WorkersOptions {
  count: number;
  /** Added to every worker's environment (the embedded reference service's address). */
  env: Record<string, string>;
  /** One line for the operator (worker starts, deaths, restarts), as ProcessLines says it. */
  say(text: string): void;
}

export interface Workers {
  /**
   * The port every worker listens on, once all of the first `count` do. Rejects with a
   * StartupError when one fails to start: a start-up failure is a configuration problem, which
   * restarting would only repeat.
   */
  ready: Promise<number>;
  /** Process ids of the workers alive now. */
  pids(): number[];
  /** SIGTERM to every worker (each drains its in-flight requests); resolves once all have exited. */
  stop(): Promise<void>;
}

interface Slot {
  worker: Worker | undefined;
  startedAt: number;
  /** Deaths in a row without a stable run between them. */
  deaths: number;
  restart: NodeJS.Timeout | undefined;
}

/**
 * The cluster primary: forks `count` workers that share one port (Node's cluster hands each new
 * connection to the next worker), starts a new one in place of any that dies, with a backoff per
 * slot so a crash loop does not spin, and drains them all on stop.
 */
export function superviseWorkers(options: WorkersOptions): Workers {
  const slots: Slot[] = [];
  let stopping = false;
  let started = false;
  let listening = 0;
  let resolveReady!: (port: number) => void;
  let rejectReady!: (error: StartupError) => void;
  const ready = new Promise<number>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  const failures = new Map<Worker, string>();

  const fork = (slot: Slot) => {
    slot.restart = undefined;
    const worker = cluster.fork(options.env);
    slot.worker = worker;
    slot.startedAt = Date.now();
    worker.on('message', (message: { type?: string; message?: string }) => {
      if (message?.type === STARTUP_FAILED) failures.set(worker, message.message ?? 'start-up failed');
    });
    worker.once('listening', (address) => {
      if (started) {
        options.say(`worker ${worker.process.pid} listening`);
        return;
      }
      if (++listening === options.count) {
        started = true;
        resolveReady(address.port);
      }
    });
    worker.once('exit', (code, signal) => {
      if (slot.worker === worker) slot.worker = undefined;
      if (stopping) return;
      if (!started) {
        rejectReady(
          new StartupError(
            failures.get(worker) ?? `a worker exited during start-up (${signal ?? `exit code ${code}`})`,
          ),
        );
        return;
      }
      slot.deaths = Date.now() - slot.startedAt >= STABLE_MS ? 1 : slot.deaths + 1;
      const delay = Math.min(RESTART_MIN_MS * 2 ** (slot.deaths - 1), RESTART_MAX_MS);
      options.say(
        `worker ${worker.process.pid} exited (${signal ?? `exit code ${code}`}), starting another in ${delay} ms`,
      );
      slot.restart = setTimeout(() => fork(slot), delay);
    });
  };

  for (let i = 0; i < options.count; i++) {
    const slot: Slot = { worker: undefined, startedAt: 0, deaths: 0, restart: undefined };
    slots.push(slot);
    fork(slot);
  }
  ready.catch(() => {});

  return {
    ready,
    pids: () =>
      slots.flatMap((slot) => (slot.worker?.process.pid === undefined ? [] : [slot.worker.process.pid])),
    async stop() {
      stopping = true;
      const exited: Promise<unknown>[] = [];
      for (const slot of slots) {
        clearTimeout(slot.restart);
        const worker = slot.worker;
        if (worker === undefined || worker.isDead()) continue;
        exited.push(new Promise((resolve) => worker.once('exit', resolve)));
        worker.process.kill('SIGTERM');
      }
      const backstop = setTimeout(() => {
        for (const slot of slots) slot.worker?.process.kill('SIGKILL');
      }, STOP_TIMEOUT_MS);
      await Promise.all(exited);
      clearTimeout(backstop);
    },
  };
}
