// A clock tests advance by hand, firing due timers in order.
import type { Clock, TimerHandle } from "../clock.js";

interface FakeTimer {
  id: number;
  at: number;
  seq: number;
  fn: () => void;
}

/** Settles pending promise chains: a few macrotask turns let awaited calls resolve. */
export async function flushMicrotasks(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class FakeClock implements Clock {
  private current: number;
  private timers: FakeTimer[] = [];
  private nextId = 1;
  private seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = { id: this.nextId++, at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Number of timers not yet fired. */
  pending(): number {
    return this.timers.length;
  }

  /** Moves time forward WITHOUT firing timers, as a stalled event loop would see it. */
  jump(ms: number): void {
    this.current += ms;
  }

  /** Moves time forward, firing every timer that falls due in order (including ones scheduled while firing). */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const next = this.takeNextDue(target);
      if (!next) break;
      this.current = next.at;
      next.fn();
    }
    this.current = target;
  }

  /**
   * Like advance, but lets promise chains settle after each timer, so async loops driven by the
   * clock (leases, queues) make progress between timers the way they would in real time.
   */
  async advanceAsync(ms: number, stepMs = ms): Promise<void> {
    const target = this.current + ms;
    await flushMicrotasks();
    while (this.current < target) {
      const stepTarget = Math.min(target, this.current + stepMs);
      for (;;) {
        const next = this.takeNextDue(stepTarget);
        if (!next) break;
        this.current = next.at;
        next.fn();
        await flushMicrotasks();
      }
      this.current = stepTarget;
      await flushMicrotasks();
    }
  }

  private takeNextDue(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    if (best) this.timers = this.timers.filter((t) => t !== best);
    return best;
  }
}
