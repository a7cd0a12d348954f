// @tier unit

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineList } from '../../src/upstream/deadline.ts';

// One list and one timer for every deadline of a client: they must still expire each at its own
// end, in order, and a released one never. Time is vitest's fake clock: each step is exact.

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('deadlines', () => {
  it('expire in the order of their ends, each at its end, whatever order they were made in', () => {
    const list = new DeadlineList(1000);
    const fired: number[] = [];
    for (const ms of [60, 20, 40, 20]) list.create(ms).onExpire(() => fired.push(ms));
    vi.advanceTimersByTime(19);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([20, 20]);
    vi.advanceTimersByTime(20);
    expect(fired).toEqual([20, 20, 40]);
    vi.advanceTimersByTime(20);
    expect(fired).toEqual([20, 20, 40, 60]);
  });

  it('never expires once released, and the others still do', () => {
    const list = new DeadlineList(1000);
    const fired: string[] = [];
    const first = list.create(20);
    first.onExpire(() => fired.push('first'));
    const second = list.create(30);
    second.onExpire(() => fired.push('second'));
    first.release();
    vi.advanceTimersByTime(30);
    expect(fired).toEqual(['second']);
    expect(first.expired).toBe(false);
    expect(second.expired).toBe(true);
  });

  it('forgets a hook when asked, and runs a hook added after expiry at once', () => {
    const list = new DeadlineList(1000);
    const deadline = list.create(10);
    let forgotten = 0;
    const forget = deadline.onExpire(() => forgotten++);
    forget();
    vi.advanceTimersByTime(10);
    expect(deadline.expired).toBe(true);
    expect(forgotten).toBe(0);
    let late = 0;
    deadline.onExpire(() => late++);
    expect(late).toBe(1);
  });

  it('takes its end from the clock it is given', () => {
    let now = 5000;
    const list = new DeadlineList(250, () => now);
    expect(list.create().end).toBe(5250);
    now = 6000;
    const deadline = list.create(10);
    expect(deadline.end).toBe(6010);
    deadline.release();
  });
});
