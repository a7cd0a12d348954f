import { type DestinationStream, pino } from 'pino';

/** What the log destination adds to pino's stream: flushing, and word of what it dropped. */
export interface LogDestination extends DestinationStream {
  /** Writes what waits, waiting at most `deadlineMs` for a stalled reader (shutdown). */
  flushWithin(deadlineMs: number): Promise<void>;
  flushSync(): void;
  /** Lines dropped so far (the reader stalled past the buffer, or writing failed). */
  readonly dropped: number;
  /**
   * Told, once the sink takes lines again, how many were dropped meanwhile and why; its own line
   * goes out through the same destination.
   */
  onDropped(listener: (lines: number, reason: 'stalled' | 'failed') => void): void;
}

/** Bytes of log lines waiting for a slow reader before new lines are dropped. */
export const DEFAULT_LOG_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * stdout for the logs, never blocking the event loop: a log shipper that stalls (or Docker's
 * blocking log mode) fills the pipe, and a synchronous write would then block the gateway, /health
 * included, until the reader resumed. Lines are gathered into blocks of up to 64 KB or 100 ms
 * (gatherLines) and handed to sonic-boom (pino's own destination), which writes
 * what it can and keeps the rest; its `maxLength` bounds what waits: past it lines are dropped
 * and counted, and one warn line says how many once the reader drains the backlog. A
 * write error (ENOSPC on a full disk, EPIPE, EBADF) is counted the same way and reported once on
 * stderr: the gateway keeps serving either way.
 */
export function createLogDestination(
  fd = 1,
  options: { maxBufferBytes?: number; format?: (line: string) => string } = {},
): LogDestination {
  const boom = openNonBlocking(fd, options.maxBufferBytes ?? DEFAULT_LOG_BUFFER_BYTES);
  const retryLater = retryWhileBusy(boom);
  const drops = countDrops(boom, fd, retryLater);
  // A block is a small part of what may wait for a stalled reader, so a stall drops lines, not blocks.
  const maxBufferBytes = options.maxBufferBytes ?? DEFAULT_LOG_BUFFER_BYTES;
  const lines = gatherLines(boom, Math.min(FLUSH_AT, Math.floor(maxBufferBytes / 8)));
  flushAtExit(() => {
    lines.flushSync();
    boom.flushSync();
  });
  return {
    write: options.format
      ? (line) => lines.write((options.format as (line: string) => string)(line))
      : lines.write,
    flushSync: lines.flushSync,
    async flushWithin(deadlineMs) {
      lines.flushSync();
      for (const until = Date.now() + deadlineMs; busy(boom) && Date.now() < until; ) {
        boom.write('');
        if (busy(boom)) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    },
    get dropped() {
      return drops.dropped;
    },
    onDropped: drops.onDropped,
  };
}

type Sink = ReturnType<typeof pino.destination>;
type DropReason = 'stalled' | 'failed';

/** sonic-boom on `fd`: synchronous writes that never wait for the reader. */
function openNonBlocking(fd: number, maxBufferBytes: number): Sink {
  // Synchronous writes, but never waiting: Node opens stdout's pipe non-blocking, so a full pipe
  // answers EAGAIN at once, and retryEAGAIN: false keeps sonic-boom from sleeping and retrying in
  // place (its default, which blocks the event loop for as long as the reader stalls). What was not
  // written waits in sonic-boom's buffer, bounded by maxLength, and goes out with the next write or
  // the next retry (retryWhileBusy).
  // Opening process.stdout (or stderr) is what makes Node set its pipe non-blocking: done here so
  // it holds even in a process that has printed nothing yet (a worker).
  if (fd === 1) void process.stdout.writable;
  else if (fd === 2) void process.stderr.writable;
  return pino.destination({ dest: fd, sync: true, maxLength: maxBufferBytes, retryEAGAIN: () => false });
}

/** What waits for a stalled reader is tried again every RETRY_MS until it is written (one timer at most). */
function retryWhileBusy(boom: Sink): () => void {
  let retry: NodeJS.Timeout | undefined;
  const retryLater = () => {
    if (retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      // An empty write makes sonic-boom try what waits again.
      if (busy(boom)) boom.write('');
      if (busy(boom)) retryLater();
    }, RETRY_MS);
    retry.unref();
  };
  return retryLater;
}

/**
 * Counts the lines sonic-boom drops (past maxLength), says once on stderr that writing failed, and
 * tells the listeners how many were dropped and why once the sink drains.
 */
function countDrops(
  boom: Sink,
  fd: number,
  retryLater: () => void,
): Pick<LogDestination, 'dropped' | 'onDropped'> {
  let dropped = 0;
  let unreported = 0;
  let reason: DropReason = 'stalled';
  let warnedOfError = false;
  let reporting = false;
  const listeners: Array<(lines: number, why: DropReason) => void> = [];
  const lose = (text: string) => {
    let lines = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
    dropped += lines;
    unreported += lines;
  };
  boom.on('drop', (data: string) => lose(data));
  boom.on('error', (error: NodeJS.ErrnoException) => {
    // sonic-boom keeps the chunk and tries it again with the next write; meanwhile what waits is
    // bounded by maxLength, so later lines are dropped (and counted) until the sink takes them.
    retryLater();
    if (error.code === 'EAGAIN' || error.code === 'EWOULDBLOCK') return;
    reason = 'failed';
    if (warnedOfError) return;
    warnedOfError = true;
    if (fd !== 2) warnOnStderr(error);
  });
  boom.on('drain', () => {
    if (unreported === 0 || reporting) return;
    const lines = unreported;
    const why = reason;
    unreported = 0;
    reason = 'stalled';
    warnedOfError = false;
    reporting = true;
    try {
      for (const listener of listeners) listener(lines, why);
    } finally {
      reporting = false;
    }
  });
  return {
    get dropped() {
      return dropped;
    },
    onDropped(listener) {
      listeners.push(listener);
    },
  };
}

function warnOnStderr(error: NodeJS.ErrnoException): void {
  try {
    process.stderr.write(
      `pet-gateway: writing the log failed (${error.code ?? error.message}); lines are dropped and counted until it works again\n`,
    );
  } catch {
    // stderr is gone too: nothing left to tell.
  }
}

/**
 * Lines gathered into blocks and handed over in one write, as nginx's `access_log … buffer= flush=`
 * does: when `flushAt` characters wait, or FLUSH_MS after the first of them, whichever comes first.
 * Each write wakes the reader (containerd, dockerd, a shipper): a write per line or per event-loop
 * turn costs both sides a system call per request under load. The drain and the exit write what
 * waits (flushWithin, flushAtExit).
 */
function gatherLines(boom: Sink, flushAt: number): { write(line: string): void; flushSync(): void } {
  let waiting = '';
  let timer: NodeJS.Timeout | undefined;
  const flushSync = () => {
    clearTimeout(timer);
    timer = undefined;
    if (waiting === '') return;
    const text = waiting;
    waiting = '';
    boom.write(text);
  };
  return {
    write(line) {
      waiting += line;
      if (waiting.length >= flushAt) flushSync();
      // Unreferenced: a process with nothing else to do may exit, and its exit writes the rest.
      else if (timer === undefined) timer = setTimeout(flushSync, FLUSH_MS).unref();
    },
    flushSync,
  };
}

/**
 * Whatever way the process ends (a forced exit after the drain timeout, a crash), the lines of its
 * last turn are written, unless the sink is stalled: a synchronous write would then block the exit
 * for as long as the reader does.
 */
function flushAtExit(flush: () => void): void {
  if (unflushed.size === 0)
    process.once('exit', () => {
      for (const each of unflushed) each();
    });
  unflushed.add(() => {
    try {
      flush();
    } catch {
      // A sink that is full or fails at exit: the lines are lost, the exit is not held.
    }
  });
}

/** Whether a write is under way or lines wait: sonic-boom exposes no public state for either. */
function busy(boom: Sink): boolean {
  const state = boom as unknown as SonicState;
  return state._writing || state._len > 0;
}

interface SonicState {
  _writing: boolean;
  _len: number;
}

/** How soon what waits for a stalled reader is tried again. */
const RETRY_MS = 50;

/** Characters of log lines gathered into one block at most. */
const FLUSH_AT = 64 * 1024;
/** The longest a line waits to be written: its delay on the reader's side. */
const FLUSH_MS = 100;

const unflushed = new Set<() => void>();
