// Real time plus an offset the caller moves forward: the operator runs at full speed (real
// sockets, real latencies) while windows of minutes, hours or days pass on demand.
import type { Clock, TimerHandle } from "../clock.js";

interface OffsetTimer {
  id: number;
  /** Due time on this clock. */
  at: number;
  fn: () => void;
  real: ReturnType<typeof setTimeout>;
}

export class OffsetClock implements Clock {
  private offsetMs: number;
  private readonly timers = new Map<number, OffsetTimer>();
  private nextId = 1;
  private readonly base: () => number;

  constructor(opts: { offsetMs?: number; base?: () => number } = {}) {
    this.offsetMs = opts.offsetMs ?? 0;
    this.base = opts.base ?? (() => Date.now());
  }

  now(): number {
    return this.base() + this.offsetMs;
  }

  /** How far ahead of real time this clock runs. */
  offset(): number {
    return this.offsetMs;
  }

  /** Number of timers not yet fired. */
  pending(): number {
    return this.timers.size;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.arm(id, this.now() + Math.max(0, ms), fn);
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    const t = this.timers.get(handle as number);
    if (!t) return;
    clearTimeout(t.real);
    this.timers.delete(t.id);
  }

  /**
   * Moves time forward. Timers are due by this clock's time, so every timer the jump
   * passes fires right away (earliest first); the others keep their due time.
   */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new Error(`an offset clock only moves forward, not by ${ms} ms`);
    this.offsetMs += ms;
    const timers = [...this.timers.values()].sort((a, b) => a.at - b.at || a.id - b.id);
    for (const t of timers) {
      clearTimeout(t.real);
      this.arm(t.id, t.at, t.fn);
    }
  }

  private arm(id: number, at: number, fn: () => void): void {
    const real = setTimeout(
      () => {
        this.timers.delete(id);
        fn();
      },
      Math.max(0, at - this.now()),
    );
    this.timers.set(id, { id, at, fn, real });
  }
}
