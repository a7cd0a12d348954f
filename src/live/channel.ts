/**
 * A queue read as an async iterator: the live lists push events, the subscription's reader (Yoga's
 * SSE writer, the WebSocket server) pulls them. Ending it (from either side) completes the reader;
 * `onReturn` tells the writer that the reader has gone.
 */
export class Channel<T> implements AsyncIterableIterator<T> {
  readonly #queue: T[] = [];
  #waiting: ((result: IteratorResult<T>) => void) | undefined;
  #ended = false;
  readonly #onReturn: () => void;

  constructor(onReturn: () => void) {
    this.#onReturn = onReturn;
  }

  get ended(): boolean {
    return this.#ended;
  }

  push(value: T): void {
    if (this.#ended) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting({ value, done: false });
    } else this.#queue.push(value);
  }

  /** Ends the stream once what is queued has been read. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    const value = this.#queue.shift();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    if (!this.#ended) {
      this.#queue.length = 0;
      this.end();
      this.#onReturn();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
