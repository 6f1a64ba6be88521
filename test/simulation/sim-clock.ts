// Simulated time. The operator runs on an injected FakeClock; the API test server, its kubelet
// stand-in and the operator's HTTP prober read the wall clock (Date) instead. So that every
// timestamp in the API (request log, creation and deletion times, probe results) lives on one
// time line, the simulation makes the process's Date follow the same fake clock while it runs.
// Real timers (sockets, the prober's timeout) still run in real time.
import { FakeClock } from "../../operator/src/runtime/testing/fake-clock.js";

const RealDate = Date;

export interface SimClock {
  clock: FakeClock;
  /** Puts the real Date back. */
  restore(): void;
}

/** A fake clock starting at `start` (epoch ms, whole seconds) and a Date that reads it. */
export function installSimClock(start: number): SimClock {
  const clock = new FakeClock(start);
  class SimDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(clock.now());
      else super(...(args as [string | number]));
    }

    static override now(): number {
      return clock.now();
    }
  }
  globalThis.Date = SimDate as DateConstructor;
  return {
    clock,
    restore: () => {
      globalThis.Date = RealDate;
    },
  };
}

/** Real elapsed milliseconds for deadlines, whatever Date says. */
export function realNow(): number {
  return performance.now();
}
