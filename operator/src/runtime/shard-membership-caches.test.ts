import { describe, expect, it } from "@jest/globals";
import { buildRing, shareOut } from "../domain/shard-ring.js";
import { ShardMembership, type NamespaceCaches } from "./shard-membership.js";
import { FakeClock } from "./testing/fake-clock.js";
import { MemoryShardStore } from "./testing/memory-shard-store.js";

const NAMESPACES = ["shop", "payments", "search", "media", "auth", "mail"];
const TIMINGS = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 1_000, skewMarginMs: 1_000 };

/** Caches that follow namespaces as told and sync when the test says so; every start and drop is logged. */
class FakeCaches implements NamespaceCaches {
  readonly following = new Set<string>();
  readonly complete = new Set<string>();
  constructor(
    private readonly log: string[],
    private readonly who: string,
    private readonly syncAtOnce = false,
  ) {}
  async follow(namespaces: ReadonlySet<string>): Promise<void> {
    for (const ns of namespaces)
      if (!this.following.has(ns)) {
        this.following.add(ns);
        if (this.syncAtOnce) this.complete.add(ns);
        this.log.push(`${this.who} follows ${ns}`);
      }
    for (const ns of [...this.following])
      if (!namespaces.has(ns)) {
        this.following.delete(ns);
        this.complete.delete(ns);
        this.log.push(`${this.who} drops ${ns}`);
      }
  }
  synced(ns: string): boolean {
    return this.following.has(ns) && this.complete.has(ns);
  }
  readonly empty = new Set<string>();
  idle(ns: string): boolean {
    return this.empty.has(ns);
  }
}

/** b's share once it joins a, who took every namespace in a first round alone. */
const bsShareAfterA = () => {
  const owners = shareOut(buildRing(["a", "b"]), NAMESPACES, new Map(NAMESPACES.map((ns) => [ns, "a"])));
  return NAMESPACES.filter((ns) => owners.get(ns) === "b");
};

function aReplica(
  store: MemoryShardStore,
  clock: FakeClock,
  identity: string,
  caches: NamespaceCaches,
  log: string[],
  namespaces: () => string[] = () => NAMESPACES,
): ShardMembership {
  return new ShardMembership({
    store: store.as(identity),
    identity,
    clock,
    ...TIMINGS,
    namespaces,
    caches,
    onGained: (ns) => log.push(`${identity} gained ${ns}`),
    onLost: (ns) => log.push(`${identity} lost ${ns}`),
  });
}

describe("shard membership with caches that follow the namespaces", () => {
  it("starts the caches of every namespace the ring gives it, and acquires one only once its caches have synced", async () => {
    const log: string[] = [];
    const store = new MemoryShardStore();
    const caches = new FakeCaches(log, "a");
    const a = aReplica(store, new FakeClock(), "a", caches, log);
    await a.tick();
    expect([...caches.following].sort()).toEqual([...NAMESPACES].sort());
    expect(a.owned()).toEqual([]);
    expect(store.markerWrites).toEqual([]);

    caches.complete.add("shop");
    await a.tick();
    expect(a.owned()).toEqual(["shop"]);
    expect(store.markerWrites.map((w) => w.namespace)).toEqual(["shop"]);
    expect(log.filter((l) => l.includes("gained"))).toEqual(["a gained shop"]);
  });

  it("acts again after a lapse only on namespaces whose caches are complete", async () => {
    const log: string[] = [];
    const store = new MemoryShardStore();
    const clock = new FakeClock();
    const caches = new FakeCaches(log, "a", true);
    const a = aReplica(store, clock, "a", caches, log);
    await a.tick();
    expect(a.owned()).toEqual([...NAMESPACES].sort());
    // Fenced past the renew deadline: acting stops, and the caches stay for the namespaces the ring still gives it.
    store.failing.add("a");
    clock.advance(TIMINGS.renewDeadlineMs + 1);
    await a.tick();
    expect(a.owned()).toEqual([]);
    expect(log.filter((l) => l.includes("drops"))).toEqual([]);
    store.failing.delete("a");
    caches.complete.delete("mail");
    await a.tick();
    expect(a.owned()).toEqual(NAMESPACES.filter((ns) => ns !== "mail").sort());
  });

  it("a namespace handed over stops being acted on, is acknowledged, and only then are its caches dropped", async () => {
    const log: string[] = [];
    const store = new MemoryShardStore();
    const clock = new FakeClock();
    const a = aReplica(store, clock, "a", new FakeCaches(log, "a", true), log);
    await a.tick();
    const b = aReplica(store, clock, "b", new FakeCaches(log, "b", true), log);
    await b.tick();
    const moving = bsShareAfterA();
    expect(moving.length).toBeGreaterThan(0);
    log.length = 0;
    store.markerWrites.length = 0;
    await a.tick();
    for (const ns of moving) {
      const lost = log.indexOf(`a lost ${ns}`);
      const dropped = log.indexOf(`a drops ${ns}`);
      expect(lost).toBeGreaterThanOrEqual(0);
      expect(dropped).toBeGreaterThan(lost);
      expect(store.markers.get(ns)?.holder).toBe("");
      expect(a.ownsNamespace(ns)).toBe(false);
    }
    expect(log.filter((l) => l.startsWith("a drops")).length).toBe(moving.length);
    await b.tick();
    for (const ns of moving) expect(b.ownsNamespace(ns)).toBe(true);
  });

  it("caches a silent replica's namespaces before its lease expires, and acts on them only once it has", async () => {
    const log: string[] = [];
    const store = new MemoryShardStore();
    const clock = new FakeClock();
    const caches = new FakeCaches(log, "a", true);
    const a = aReplica(store, clock, "a", caches, log);
    const b = aReplica(store, clock, "b", new FakeCaches(log, "b", true), log);
    for (let i = 0; i < 3; i++) {
      await a.tick();
      await b.tick();
      clock.advance(TIMINGS.retryPeriodMs);
    }
    const bs = bsShareAfterA();
    expect(bs.length).toBeGreaterThan(0);
    for (const ns of bs) expect(caches.following.has(ns)).toBe(false);
    // b goes silent: past its renew deadline plus the skew margin, a caches b's share, not yet acting on it.
    clock.advance(TIMINGS.renewDeadlineMs + TIMINGS.skewMarginMs);
    await a.tick();
    for (const ns of bs)
      expect({ ns, cached: caches.following.has(ns), owned: a.ownsNamespace(ns) }).toEqual({
        ns,
        cached: true,
        owned: false,
      });
    clock.advance(TIMINGS.leaseDurationMs);
    await a.tick();
    expect(a.owned()).toEqual([...NAMESPACES].sort());
  });

  it("shares out a namespace that has a marker though no work is seen there (leftovers of a deleted policy)", async () => {
    const log: string[] = [];
    const store = new MemoryShardStore();
    const clock = new FakeClock();
    const gone = aReplica(store, clock, "gone", new FakeCaches(log, "gone", true), log, () => ["leftover"]);
    await gone.tick();
    expect(gone.owned()).toEqual(["leftover"]);
    // The owner dies; the policy went with it: the marker alone says where to look.
    clock.advance(TIMINGS.leaseDurationMs + TIMINGS.skewMarginMs + 1);
    const a = aReplica(store, clock, "a", new FakeCaches(log, "a", true), log, () => []);
    await a.tick();
    expect(a.owned()).toEqual(["leftover"]);
  });

  it("retires the marker of a namespace its complete caches show idle: acting stops first, then the marker is deleted and the caches go", async () => {
    const log: string[] = [];
    const store = new MemoryShardStore();
    const clock = new FakeClock();
    const caches = new FakeCaches(log, "a", true);
    let namespaces = ["shop", "leftover"];
    const a = aReplica(store, clock, "a", caches, log, () => namespaces);
    await a.tick();
    expect(a.owned()).toEqual(["leftover", "shop"]);
    namespaces = ["shop"];
    caches.empty.add("leftover");
    log.length = 0;
    await a.tick();
    expect(a.ownsNamespace("leftover")).toBe(false);
    expect(store.markers.has("leftover")).toBe(false);
    expect(log).toEqual(["a lost leftover"]);
    await a.tick();
    expect(log).toEqual(["a lost leftover", "a drops leftover"]);
    expect(a.owned()).toEqual(["shop"]);
  });

  it("without following caches, a marker of another replica alone is not shared out (the caches see the whole cluster)", async () => {
    const store = new MemoryShardStore();
    const clock = new FakeClock();
    const gone = new ShardMembership({
      store: store.as("gone"),
      identity: "gone",
      clock,
      ...TIMINGS,
      namespaces: () => ["leftover"],
    });
    await gone.tick();
    clock.advance(TIMINGS.leaseDurationMs + TIMINGS.skewMarginMs + 1);
    const a = new ShardMembership({ store: store.as("a"), identity: "a", clock, ...TIMINGS, namespaces: () => [] });
    await a.tick();
    expect(a.owned()).toEqual([]);
  });
});
