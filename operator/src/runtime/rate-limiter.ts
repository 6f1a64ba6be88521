// Retry pacing like client-go's DefaultControllerRateLimiter: per-key exponential backoff,
// capped by an overall token bucket; the larger of the two delays wins.
import type { Clock } from "./clock.js";

export interface RateLimiter {
  /** Delay in ms before the key may be retried; counts as one more failure for it. */
  when(key: string): number;
  /** Clears the key's failure history (after a success). */
  forget(key: string): void;
  numRequeues(key: string): number;
}

export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private failures = new Map<string, number>();

  constructor(
    private readonly baseDelayMs = 5,
    private readonly maxDelayMs = 1_000_000,
  ) {}

  when(key: string): number {
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    // 2^exp overflows to Infinity long before it matters; the cap keeps it finite.
    const delay = this.baseDelayMs * Math.pow(2, exp);
    return Math.min(delay, this.maxDelayMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/** Token bucket (like golang.org/x/time/rate Reserve): a reservation may go into debt and returns the wait. */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly clock: Clock,
    private readonly qps = 10,
    private readonly burst = 100,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key: string): number {
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.last);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    return Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

export class MaxOfRateLimiter implements RateLimiter {
  constructor(private readonly limiters: RateLimiter[]) {}

  when(key: string): number {
    let delay = 0;
    for (const l of this.limiters) delay = Math.max(delay, l.when(key));
    return delay;
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    let n = 0;
    for (const l of this.limiters) n = Math.max(n, l.numRequeues(key));
    return n;
  }
}

/** 5 ms doubling to 1000 s per key, and 10 qps with a burst of 100 overall. */
export function defaultControllerRateLimiter(clock: Clock): RateLimiter {
  return new MaxOfRateLimiter([
    new ItemExponentialFailureRateLimiter(5, 1_000_000),
    new BucketRateLimiter(clock, 10, 100),
  ]);
}
