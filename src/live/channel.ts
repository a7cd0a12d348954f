/**
 * The newest value, read as an async iterator: the live lists push snapshots, the subscription's
 * reader (Yoga's SSE writer, the WebSocket relay) pulls them. A snapshot pushed while the previous
 * one is still unread replaces it, so a reader that stops reading holds one value, never a queue
 * (a live list needs only its latest state). Ending it (from either side) completes the reader;
 * `onReturn` tells the writer that the reader has gone.
 */
export class Channel<T> implements AsyncIterableIterator<T> {
  #pending: { value: T } | undefined;
  /** When the unread value's predecessor began to wait (`performance.now()`); undefined when all is read. */
  #unreadSince: number | undefined;
  #waiting: ((result: IteratorResult<T>) => void) | undefined;
  #ended = false;
  readonly #onReturn: () => void;

  constructor(onReturn: () => void) {
    this.#onReturn = onReturn;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /**
   * How long the reader has left a value unread, in milliseconds (0 when it is waiting for one):
   * a replaced value counts from when the first unread one arrived.
   */
  unreadFor(now: number): number {
    return this.#unreadSince === undefined ? 0 : now - this.#unreadSince;
  }

  push(value: T): void {
    if (this.#ended) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting({ value, done: false });
      return;
    }
    if (this.#pending === undefined) this.#unreadSince = performance.now();
    this.#pending = { value };
  }

  /** Ends the stream once what is pending has been read. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    const pending = this.#pending;
    if (pending !== undefined) {
      this.#pending = undefined;
      this.#unreadSince = undefined;
      return Promise.resolve({ value: pending.value, done: false });
    }
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    if (!this.#ended) {
      this.#pending = undefined;
      this.#unreadSince = undefined;
      this.end();
      this.#onReturn();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
