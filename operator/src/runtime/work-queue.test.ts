import { describe, it, expect } from "@jest/globals";
import { FakeClock, flushMicrotasks } from "./testing/fake-clock.js";
import { ItemExponentialFailureRateLimiter, BucketRateLimiter, defaultControllerRateLimiter } from "./rate-limiter.js";
import { WorkQueue, TerminalError, runController, type ReconcileResult } from "./work-queue.js";

function aQueue(clock = new FakeClock()) {
  return { clock, queue: new WorkQueue({ clock }) };
}

const silentLogger = { info: () => {}, error: () => {} };

/** Takes every key that is ready right now without waiting. */
async function drainReady(queue: WorkQueue): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) keys.push((await queue.get()) as string);
  return keys;
}

describe("WorkQueue", () => {
  it("hands out a key added twice only once", async () => {
    const { queue } = aQueue();
    queue.add("ns/a");
    queue.add("ns/a");
    queue.add("ns/b");
    expect(queue.len()).toBe(2);
    expect(await drainReady(queue)).toEqual(["ns/a", "ns/b"]);
  });

  it("marks a key added while it is processed dirty and hands it out once more after done", async () => {
    const { queue } = aQueue();
    queue.add("ns/a");
    const key = await queue.get();
    queue.add("ns/a");
    queue.add("ns/a");
    expect(queue.len()).toBe(0); // not handed out while in flight
    queue.done(key as string);
    expect(queue.len()).toBe(1);
    const again = await queue.get();
    expect(again).toBe("ns/a");
    queue.done("ns/a");
    expect(queue.len()).toBe(0);
  });

  it("wakes a waiting get when a key arrives", async () => {
    const { queue } = aQueue();
    const pending = queue.get();
    queue.add("ns/a");
    expect(await pending).toBe("ns/a");
  });

  it("delivers delayed keys in deadline order and only when due", async () => {
    const { clock, queue } = aQueue();
    queue.addAfter("late", 300);
    queue.addAfter("early", 100);
    queue.addAfter("middle", 200);
    clock.advance(99);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(await drainReady(queue)).toEqual(["early"]);
    clock.advance(200);
    expect(await drainReady(queue)).toEqual(["middle", "late"]);
  });

  it("keeps the earlier deadline when the same key is delayed twice", async () => {
    const { clock, queue } = aQueue();
    queue.addAfter("k", 500);
    queue.addAfter("k", 100);
    queue.addAfter("k", 900);
    clock.advance(100);
    expect(await drainReady(queue)).toEqual(["k"]);
    queue.done("k");
    clock.advance(1000);
    expect(queue.len()).toBe(0); // the later deadlines were superseded, not queued again
  });

  it("adds at once when the delay is zero or negative", () => {
    const { queue } = aQueue();
    queue.addAfter("a", 0);
    queue.addAfter("b", -5);
    expect(queue.len()).toBe(2);
  });

  it("ignores adds after shutdown and lets get return undefined once empty", async () => {
    const { queue } = aQueue();
    queue.add("a");
    const drained = queue.shutDown();
    queue.add("b");
    expect(await queue.get()).toBe("a");
    expect(await queue.get()).toBeUndefined();
    queue.done("a");
    await drained;
  });

  it("counts adds and reports depth", () => {
    let adds = 0;
    let depth = -1;
    const queue = new WorkQueue({
      clock: new FakeClock(),
      metrics: { adds: { inc: () => adds++ }, depth: { set: (v) => (depth = v) } },
    });
    queue.add("a");
    queue.add("a");
    queue.add("b");
    expect(adds).toBe(2);
    expect(depth).toBe(2);
  });
});

describe("rate limiters", () => {
  it("backs off per key from 5 ms doubling up to 1000 s", () => {
    const rl = new ItemExponentialFailureRateLimiter();
    const delays = Array.from({ length: 30 }, () => rl.when("k"));
    expect(delays.slice(0, 6)).toEqual([5, 10, 20, 40, 80, 160]);
    expect(delays[17]).toBe(655_360);
    expect(delays.slice(18)).toEqual(Array(12).fill(1_000_000));
    expect(rl.when("other")).toBe(5);
    rl.forget("k");
    expect(rl.when("k")).toBe(5);
  });

  it("lets a burst of 100 through and then paces at 10 per second", () => {
    const clock = new FakeClock();
    const rl = new BucketRateLimiter(clock, 10, 100);
    const delays = Array.from({ length: 102 }, (_, i) => rl.when(`k${i}`));
    expect(delays.slice(0, 100).every((d) => d === 0)).toBe(true);
    expect(delays[100]).toBe(100);
    expect(delays[101]).toBe(200);
    clock.advance(10_000);
    expect(rl.when("again")).toBe(0);
  });

  it("takes the larger of per-key backoff and the overall bucket", () => {
    const clock = new FakeClock();
    const rl = defaultControllerRateLimiter(clock);
    for (let i = 0; i < 100; i++) rl.when(`burst${i}`);
    expect(rl.when("fresh")).toBe(100); // bucket dominates the 5 ms first retry
    clock.advance(100_000);
    for (let i = 0; i < 10; i++) rl.when("k");
    expect(rl.when("k")).toBe(5 * 2 ** 10); // per-key dominates once the bucket has refilled
  });
});

describe("runController", () => {
  it("retries a failing key with growing backoff and forgets it after success", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, rateLimiter: new ItemExponentialFailureRateLimiter() });
    const attempts: number[] = [];
    const ctl = runController({
      queue,
      workers: 1,
      clock,
      logger: silentLogger,
      reconcile: async () => {
        attempts.push(clock.now());
        if (attempts.length < 4) throw new Error("transient");
      },
    });
    const start = clock.now();
    queue.add("ns/p");
    await clock.advanceAsync(1000, 1);
    expect(attempts.map((t) => t - start)).toEqual([0, 5, 15, 35]);
    expect(queue.numRequeues("ns/p")).toBe(0);
    await ctl.stop();
  });

  it("does not retry a terminal error", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    let calls = 0;
    const errors: object[] = [];
    const ctl = runController({
      queue,
      workers: 2,
      clock,
      logger: { info: () => {}, error: (o) => errors.push(o) },
      reconcile: async () => {
        calls++;
        throw new TerminalError("spec.probe.port: required");
      },
    });
    queue.add("ns/bad");
    await clock.advanceAsync(60_000, 1000);
    expect(calls).toBe(1);
    expect(errors).toHaveLength(1);
    await ctl.stop();
  });

  it("requeues after the delay a reconcile asks for", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    const seen: number[] = [];
    const start = clock.now();
    const ctl = runController({
      queue,
      workers: 1,
      clock,
      logger: silentLogger,
      reconcile: async (): Promise<ReconcileResult> => {
        seen.push(clock.now() - start);
        return seen.length < 3 ? { requeueAfterMs: 30_000 } : undefined;
      },
    });
    queue.add("ns/p");
    await clock.advanceAsync(120_000, 1000);
    expect(seen).toEqual([0, 30_000, 60_000]);
    await ctl.stop();
  });

  it("never runs the same key on two workers at once, yet runs it again after a concurrent add", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    let inFlight = 0;
    let maxInFlight = 0;
    let runs = 0;
    const releases: Array<() => void> = [];
    const ctl = runController({
      queue,
      workers: 4,
      clock,
      logger: silentLogger,
      reconcile: async () => {
        runs++;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise<void>((r) => releases.push(r));
        inFlight--;
      },
    });
    queue.add("ns/p");
    await flushMicrotasks();
    queue.add("ns/p");
    queue.add("ns/p");
    await flushMicrotasks();
    expect(runs).toBe(1);
    releases.shift()!();
    await flushMicrotasks();
    expect(runs).toBe(2);
    releases.shift()!();
    await flushMicrotasks();
    expect(runs).toBe(2);
    expect(maxInFlight).toBe(1);
    await ctl.stop();
  });

  it("lets in-flight work finish on stop", async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    let finished = false;
    let release: () => void = () => {};
    const ctl = runController({
      queue,
      workers: 1,
      clock,
      logger: silentLogger,
      reconcile: async () => {
        await new Promise<void>((r) => (release = r));
        finished = true;
      },
    });
    queue.add("a");
    await flushMicrotasks();
    const stopping = ctl.stop();
    release();
    await stopping;
    expect(finished).toBe(true);
  });
});
