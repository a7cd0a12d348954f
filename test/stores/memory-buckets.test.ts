// @tier unit

import { RateLimiterRes } from 'rate-limiter-flexible';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryBuckets } from '../../src/stores/memory-buckets.ts';

// A budget in points restored continuously: 60 points a minute is one a second, whatever the
// window, unlike a fixed window's all-at-once reset.

describe('MemoryBuckets: token buckets restored continuously', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-11-28T12:00:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('takes what it holds, refuses past it with the wait until the cost fits', async () => {
    const buckets = new MemoryBuckets({ points: 60, duration: 60 });
    expect((await buckets.consume('k', 60)).remainingPoints).toBe(0);
    const refused = await buckets.consume('k', 10).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimiterRes);
    expect((refused as RateLimiterRes).msBeforeNext).toBe(10_000);
    expect((refused as RateLimiterRes).remainingPoints).toBe(0);
  });

  it('restores a point a second at 60 a minute, never past the capacity', async () => {
    const buckets = new MemoryBuckets({ points: 60, duration: 60 });
    await buckets.consume('k', 50);
    vi.advanceTimersByTime(5_000);
    expect((await buckets.consume('k', 1)).remainingPoints).toBe(14);
    vi.advanceTimersByTime(3_600_000);
    expect((await buckets.consume('k', 0)).remainingPoints).toBe(60);
  });

  it('gives points back up to the capacity, and keeps keys apart', async () => {
    const buckets = new MemoryBuckets({ points: 10, duration: 60 });
    await buckets.consume('a', 9);
    expect((await buckets.reward('a', 5)).remainingPoints).toBe(6);
    expect((await buckets.reward('a', 50)).remainingPoints).toBe(10);
    expect((await buckets.consume('b', 10)).remainingPoints).toBe(0);
    expect((await buckets.consume('a', 10)).remainingPoints).toBe(0);
  });

  it('a refused take changes nothing', async () => {
    const buckets = new MemoryBuckets({ points: 10, duration: 60 });
    await buckets.consume('k', 8);
    await expect(buckets.consume('k', 3)).rejects.toBeInstanceOf(RateLimiterRes);
    expect((await buckets.consume('k', 2)).remainingPoints).toBe(0);
  });
});
