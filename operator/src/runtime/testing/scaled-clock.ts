// A clock that runs faster than real time by a fixed rate: now() advances `rate` virtual
// milliseconds per real one and timers fire at their virtual due time. Tests use it to let
// a minute of operator time (probe periods, status spacing, event buckets, lease renewals)
// pass in a fraction of that, while every API call and probe stays real.
import type { Clock, TimerHandle } from "../clock.js";

export class ScaledClock implements Clock {
  private readonly realOrigin: number;
  private readonly virtualOrigin: number;

  constructor(
    readonly rate: number,
    origin: { real: number; virtual?: number } = { real: Date.now() },
  ) {
    if (!(rate > 0) || !Number.isFinite(rate)) throw new Error(`clock rate must be a positive number, got ${rate}`);
    this.realOrigin = origin.real;
    this.virtualOrigin = origin.virtual ?? origin.real;
  }

  now(): number {
    return this.virtualOrigin + (Date.now() - this.realOrigin) * this.rate;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return setTimeout(fn, Math.max(0, ms) / this.rate);
  }

  clearTimeout(handle: TimerHandle): void {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  }
}
