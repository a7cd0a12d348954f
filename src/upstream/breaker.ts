/** @default failureThreshold 5, openMs 5000 */
export interface BreakerOptions {
  /** Consecutive failed calls that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit fails fast before letting one probe through. */
  openMs: number;
  now?: () => number;
  /** Told of every state change (metrics, logs). */
  onStateChange?: (state: BreakerState) => void;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * A circuit breaker for one upstream origin. Closed: calls flow, consecutive failures are counted.
 * Open: calls fail at once (no socket, no timer) until `openMs` has passed. Half-open: exactly one
 * probe is let through; its success closes the circuit, its failure opens it again.
 */
export class CircuitBreaker {
  #state: BreakerState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #probing = false;
  readonly #options: Required<BreakerOptions>;

  constructor(options: BreakerOptions) {
    this.#options = { now: Date.now, onStateChange: () => {}, ...options };
  }

  #set(state: BreakerState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#options.onStateChange(state);
  }

  get state(): BreakerState {
    return this.#state;
  }

  /** Whether a call may go out now; in half-open, true for the single probe only. */
  tryAcquire(): boolean {
    if (this.#state === 'closed') return true;
    if (this.#state === 'open') {
      if (this.#options.now() - this.#openedAt < this.#options.openMs) return false;
      this.#set('half-open');
      this.#probing = false;
    }
    if (this.#probing) return false;
    this.#probing = true;
    return true;
  }

  onSuccess(): void {
    this.#failures = 0;
    this.#probing = false;
    this.#set('closed');
  }

  /**
   * The call was given up by its caller (its client went away): it says nothing of the upstream, so
   * nothing is counted; a half-open probe's slot is freed for the next call.
   */
  onCancel(): void {
    this.#probing = false;
  }

  onFailure(): void {
    this.#probing = false;
    this.#failures += 1;
    if (this.#state === 'half-open' || this.#failures >= this.#options.failureThreshold) {
      this.#openedAt = this.#options.now();
      this.#set('open');
    }
  }
}
