/**
 * Why a scope expired: its time ran out, or the client it works for went away (nobody is left to
 * read the answer). The second is no fault of the upstream's: breaker, retries and the "unreachable"
 * line leave it alone.
 */
export type ExpiryReason = 'deadline' | 'client gone';

/**
 * What an upstream call and its backoffs wait under: something that may expire (an operation's
 * deadline, or a shared call whose every waiter has given up), and when at the latest it does.
 */
export interface CallScope {
  readonly expired: boolean;
  /** Why it expired; undefined while it has not. */
  readonly reason: ExpiryReason | undefined;
  /** When it expires at the latest, in `Date.now()` milliseconds (a 429's wait must end before). */
  readonly end: number;
  /** Runs `cancel` once, when it expires; the returned function forgets `cancel`. */
  onExpire(cancel: () => void): () => void;
}

/**
 * The cancel hooks of a scope: plain functions in an array (a call or two at a time), run once when
 * it expires. Not an EventTarget: adding and removing its listeners was a measured cost per call.
 */
export abstract class ExpiringScope implements CallScope {
  abstract readonly end: number;
  #reason: ExpiryReason | undefined;
  #cancels: Array<() => void> | undefined;

  get expired(): boolean {
    return this.#reason !== undefined;
  }

  get reason(): ExpiryReason | undefined {
    return this.#reason;
  }

  onExpire(cancel: () => void): () => void {
    if (this.#reason !== undefined) {
      cancel();
      return noop;
    }
    if (this.#cancels === undefined) this.#cancels = [];
    const cancels = this.#cancels;
    cancels.push(cancel);
    return () => {
      // Once the scope expires (or forgets all), its hooks are being run or dropped: a hook that
      // forgets itself (or another) as its call ends must not shift the list under that walk, or
      // the walk skips the next call, which then runs on past the deadline.
      if (this.#cancels !== cancels) return;
      const index = cancels.indexOf(cancel);
      if (index !== -1) cancels.splice(index, 1);
    };
  }

  /** Runs the hooks (once); the first reason given is the one kept. */
  expire(reason: ExpiryReason = 'deadline'): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    const cancels = this.#cancels;
    this.#cancels = undefined;
    if (cancels) for (const cancel of cancels) cancel();
  }

  /** Forgets the hooks: the scope will never expire. */
  protected forgetAll(): void {
    this.#cancels = undefined;
  }
}

/**
 * One operation's deadline: every call and backoff of the operation honours it. Not an
 * AbortController with a timer: per request that was a controller, a signal, a timer and an
 * event listener per call (undici's, ours, the coalescer's), the largest share of the upstream
 * client's cost per call. Deadlines live in one list per client, kept in the order they expire,
 * with one timer for the earliest.
 */
export class Deadline extends ExpiringScope {
  readonly end: number;
  #list: DeadlineList | undefined;
  /** Neighbours in the list; undefined at its ends or once out of it. */
  prev: Deadline | undefined;
  next: Deadline | undefined;

  constructor(end: number, list: DeadlineList) {
    super();
    this.end = end;
    this.#list = list;
  }

  /** The operation is over: the deadline leaves the list and never expires. */
  release(): void {
    this.#list?.remove(this);
    this.#list = undefined;
    this.forgetAll();
  }

  /**
   * The client went away: the deadline leaves the list and expires now, cancelling the calls in
   * flight. Nothing once the operation is over (released) or already expired.
   */
  abandon(): void {
    const list = this.#list;
    if (list === undefined) return;
    list.remove(this);
    this.expire('client gone');
  }

  override expire(reason?: ExpiryReason): void {
    this.#list = undefined;
    super.expire(reason);
  }
}

const noop = () => {};

/**
 * The deadlines of one upstream client, earliest first. They mostly share one timeout, so a new one
 * nearly always goes at the tail (the search from the tail stops at once); a release unlinks in
 * O(1). One unref'd timer is armed for the head; it may fire early (the head was released), and
 * then it is armed again for the new head.
 */
export class DeadlineList {
  readonly #timeoutMs: number;
  readonly #now: () => number;
  #head: Deadline | undefined;
  #tail: Deadline | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (`Date.now()` ms); Infinity when none is armed. */
  #armedFor = Number.POSITIVE_INFINITY;

  constructor(timeoutMs: number, now: () => number = Date.now) {
    this.#timeoutMs = timeoutMs;
    this.#now = now;
  }

  /** A deadline `timeoutMs` (or the list's timeout) from now. */
  create(timeoutMs = this.#timeoutMs): Deadline {
    const deadline = new Deadline(this.#now() + timeoutMs, this);
    let after = this.#tail;
    while (after !== undefined && after.end > deadline.end) after = after.prev;
    deadline.prev = after;
    deadline.next = after === undefined ? this.#head : after.next;
    if (deadline.next) deadline.next.prev = deadline;
    else this.#tail = deadline;
    if (after) after.next = deadline;
    else this.#head = deadline;
    if (deadline.end < this.#armedFor) this.#arm(deadline.end);
    return deadline;
  }

  remove(deadline: Deadline): void {
    const { prev, next } = deadline;
    if (prev) prev.next = next;
    else if (this.#head === deadline) this.#head = next;
    else return; // not in the list
    if (next) next.prev = prev;
    else this.#tail = prev;
    deadline.prev = undefined;
    deadline.next = undefined;
  }

  #arm(at: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#armedFor = at;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, at - this.#now()));
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedFor = Number.POSITIVE_INFINITY;
    const now = this.#now();
    let head = this.#head;
    while (head !== undefined && head.end <= now) {
      this.remove(head);
      head.expire();
      head = this.#head;
    }
    if (head !== undefined) this.#arm(head.end);
  }
}
