import { describe, it, expect } from "@jest/globals";
import { FakeClock } from "./testing/fake-clock.js";
import { LeaderElector, type LeaseRecord, type LeaseStore } from "./leader-election.js";
import { MemoryLeaseStore } from "./testing/memory-lease-store.js";

/** A view of a shared store that one replica can be cut off from, as in a network partition. */
function partitionable(store: LeaseStore) {
  const view = {
    cut: false,
    get: () => (view.cut ? Promise.reject(new Error("partitioned")) : store.get()),
    create: (l: LeaseRecord) => (view.cut ? Promise.reject(new Error("partitioned")) : store.create(l)),
    update: (l: LeaseRecord) => (view.cut ? Promise.reject(new Error("partitioned")) : store.update(l)),
  };
  return view;
}

function anElector(
  clock: FakeClock,
  store: LeaseStore,
  identity: string,
  extra: Partial<ConstructorParameters<typeof LeaderElector>[0]> = {},
) {
  const log: string[] = [];
  const elector = new LeaderElector({
    store,
    identity,
    clock,
    random: () => 0.5,
    onStartedLeading: () => log.push(`${identity} started`),
    onStoppedLeading: () => log.push(`${identity} stopped`),
    ...extra,
  });
  return { elector, log };
}

/** Advances in small steps, checking an invariant and recording when each replica leads. */
async function run(
  clock: FakeClock,
  ms: number,
  electors: LeaderElector[],
  onStep?: (t: number) => void,
): Promise<void> {
  const step = 50;
  for (let t = 0; t < ms; t += step) {
    await clock.advanceAsync(step);
    const leaders = electors.filter((e) => e.isLeader());
    expect(leaders.length).toBeLessThanOrEqual(1);
    onStep?.(clock.now());
  }
}

describe("LeaderElector", () => {
  it("lets exactly one of two replicas lead, and keeps renewing every retry period", async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = anElector(clock, store, "a");
    const b = anElector(clock, store, "b");
    a.elector.start();
    b.elector.start();
    await run(clock, 60_000, [a.elector, b.elector]);
    expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean)).toHaveLength(1);
    const writesBefore = store.writes;
    await run(clock, 20_000, [a.elector, b.elector]);
    expect(store.writes - writesBefore).toBe(10); // one renewal per 2 s
    expect(store.peek()?.leaseTransitions).toBe(0);
  });

  it("fences the leader before the other replica can take the lease when renewals fail", async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const viewA = partitionable(store);
    const a = anElector(clock, viewA, "a");
    const b = anElector(clock, store, "b");
    a.elector.start();
    await run(clock, 1_000, [a.elector]);
    expect(a.elector.isLeader()).toBe(true);
    b.elector.start();
    await run(clock, 5_000, [a.elector, b.elector]);

    const lastRenew = store.peek()!.renewTime!;
    viewA.cut = true;
    let aLostAt = 0;
    let bLeadsAt = 0;
    await run(clock, 40_000, [a.elector, b.elector], (t) => {
      if (!aLostAt && !a.elector.isLeader()) aLostAt = t;
      if (!bLeadsAt && b.elector.isLeader()) bLeadsAt = t;
    });
    expect(aLostAt).toBeGreaterThan(0);
    expect(aLostAt - lastRenew).toBeLessThanOrEqual(10_000);
    expect(bLeadsAt).toBeGreaterThan(0);
    expect(bLeadsAt - lastRenew).toBeGreaterThanOrEqual(15_000);
    expect(aLostAt).toBeLessThan(bLeadsAt);
    expect(a.log).toEqual(["a started", "a stopped"]);
    expect(store.peek()).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
  });

  it("turns isLeader false at the renew deadline even before any timer has run", async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const view = partitionable(store);
    const a = anElector(clock, view, "a");
    a.elector.start();
    await clock.advanceAsync(100);
    expect(a.elector.isLeader()).toBe(true);
    view.cut = true;
    // Jump the clock without firing timers: a stalled event loop must not extend leadership.
    const renewed = store.peek()!.renewTime!;
    clock.jump(renewed + 10_000 - clock.now());
    expect(a.elector.isLeader()).toBe(false);
  });

  it("calls onStoppedLeading as isLeader turns false even when timers fire a millisecond early", async () => {
    const fake = new FakeClock();
    // Node's timers may run up to 1 ms before Date.now() reaches their due time.
    const early = {
      now: () => fake.now(),
      setTimeout: (fn: () => void, ms: number) => fake.setTimeout(fn, Math.max(1, ms - 1)),
      clearTimeout: (h: unknown) => fake.clearTimeout(h),
    };
    const store = new MemoryLeaseStore();
    const view = partitionable(store);
    const log: string[] = [];
    const a = new LeaderElector({
      store: view,
      identity: "a",
      clock: early,
      random: () => 0.5,
      onStoppedLeading: () => log.push("stopped"),
    });
    a.start();
    await fake.advanceAsync(100);
    expect(a.isLeader()).toBe(true);
    view.cut = true;
    let lostAt = 0;
    let stoppedAt = 0;
    for (let t = 0; t < 15_000 && !stoppedAt; t++) {
      await fake.advanceAsync(1);
      if (!lostAt && !a.isLeader()) lostAt = fake.now();
      if (!stoppedAt && log.includes("stopped")) stoppedAt = fake.now();
    }
    expect(lostAt).toBeGreaterThan(0);
    expect(stoppedAt).toBe(lostAt);
    await a.stop();
  });

  it("takes over a lease whose holder stopped renewing, once it has expired by its own observation", async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = anElector(clock, store, "a");
    const b = anElector(clock, store, "b");
    a.elector.start();
    await run(clock, 1_000, [a.elector]);
    b.elector.start();
    await run(clock, 3_000, [a.elector, b.elector]);
    await a.elector.stop();
    const stoppedAt = clock.now();
    let bLeadsAt = 0;
    await run(clock, 30_000, [a.elector, b.elector], (t) => {
      if (!bLeadsAt && b.elector.isLeader()) bLeadsAt = t;
    });
    expect(bLeadsAt - stoppedAt).toBeGreaterThanOrEqual(13_000); // the last renewal was at most 2 s before stop
    expect(bLeadsAt - stoppedAt).toBeLessThanOrEqual(15_000 + 3_200);
  });

  it("tries again exactly when the watched lease expires, not at the next jittered retry", async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    await store.create({
      holderIdentity: "gone",
      leaseDurationSeconds: 15,
      renewTime: clock.now(),
      acquireTime: clock.now(),
      leaseTransitions: 0,
    });
    // The largest jitter: without the expiry wake-up the takeover lands up to 4.4 s late.
    const b = anElector(clock, store, "b", { random: () => 0.999 });
    b.elector.start();
    const start = clock.now();
    let bLeadsAt = 0;
    await run(clock, 30_000, [b.elector], (t) => {
      if (!bLeadsAt && b.elector.isLeader()) bLeadsAt = t;
    });
    expect(bLeadsAt - start).toBeGreaterThanOrEqual(15_000);
    expect(bLeadsAt - start).toBeLessThanOrEqual(15_000 + 100);
  });

  it("judges expiry by when it saw the lease change, not by the remote renewTime", async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    // Another replica's clock is an hour behind: its renewTime looks ancient to us.
    await store.create({
      holderIdentity: "skewed",
      leaseDurationSeconds: 15,
      renewTime: clock.now() - 3_600_000,
      acquireTime: clock.now() - 3_600_000,
      leaseTransitions: 0,
    });
    const b = anElector(clock, store, "b");
    b.elector.start();
    let bLeadsAt = 0;
    const start = clock.now();
    await run(clock, 30_000, [b.elector], (t) => {
      if (!bLeadsAt && b.elector.isLeader()) bLeadsAt = t;
    });
    expect(bLeadsAt - start).toBeGreaterThanOrEqual(15_000);
  });

  it("hands the lease over at once on release", async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = anElector(clock, store, "a");
    const b = anElector(clock, store, "b");
    a.elector.start();
    await run(clock, 1_000, [a.elector]);
    b.elector.start();
    await run(clock, 10_000, [a.elector, b.elector]);
    await a.elector.release();
    expect(a.elector.isLeader()).toBe(false);
    expect(store.peek()).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
    const releasedAt = clock.now();
    let bLeadsAt = 0;
    await run(clock, 5_000, [a.elector, b.elector], (t) => {
      if (!bLeadsAt && b.elector.isLeader()) bLeadsAt = t;
    });
    expect(bLeadsAt - releasedAt).toBeLessThanOrEqual(3_200); // one acquire retry, not a lease duration
    expect(a.log).toEqual(["a started", "a stopped"]);
    expect(b.log).toEqual(["b started"]);
  });

  it("reports leadership on the leader gauge", async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    let gauge = -1;
    const view = partitionable(store);
    const a = anElector(clock, view, "a", { metrics: { leader: { set: (v) => (gauge = v) } } });
    a.elector.start();
    await clock.advanceAsync(100);
    expect(gauge).toBe(1);
    view.cut = true;
    await clock.advanceAsync(11_000, 100);
    expect(gauge).toBe(0);
  });

  it.each<[string, Partial<ConstructorParameters<typeof LeaderElector>[0]>]>([
    ["leaseDuration not above renewDeadline", { leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }],
    ["renewDeadline not above retryPeriod with jitter", { renewDeadlineMs: 2_000, retryPeriodMs: 2_000 }],
    ["an empty identity", { identity: "" }],
  ])("rejects %s", (_name, opts) => {
    expect(() => new LeaderElector({ store: new MemoryLeaseStore(), identity: "x", ...opts })).toThrow(
      /leader election/,
    );
  });
});
