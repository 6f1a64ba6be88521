import { describe, expect, it } from "@jest/globals";
import { buildRing, shareOut } from "../domain/shard-ring.js";
import { ShardMembership } from "./shard-membership.js";
import { FakeClock } from "./testing/fake-clock.js";
import { MemoryShardStore } from "./testing/memory-shard-store.js";

const NAMESPACES = ["shop", "payments", "search", "media", "auth", "mail"];
const TIMINGS = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 1_000, skewMarginMs: 1_000 };

interface World {
  clock: FakeClock;
  store: MemoryShardStore;
  replicas: Map<string, ShardMembership>;
  events: string[];
}

function aWorld(): World {
  return { clock: new FakeClock(), store: new MemoryShardStore(), replicas: new Map(), events: [] };
}

function aReplica(
  w: World,
  identity: string,
  extra: Partial<ConstructorParameters<typeof ShardMembership>[0]> = {},
): ShardMembership {
  const m = new ShardMembership({
    store: w.store.as(identity),
    identity,
    clock: w.clock,
    ...TIMINGS,
    namespaces: () => NAMESPACES,
    onGained: (ns) => w.events.push(`${identity} gained ${ns}`),
    onLost: (ns) => w.events.push(`${identity} lost ${ns}`),
    ...extra,
  });
  w.replicas.set(identity, m);
  return m;
}

/** Fails at once if two replicas act on one namespace. */
function expectOneOwnerEach(w: World): void {
  for (const ns of NAMESPACES) {
    const owners = [...w.replicas.values()].filter((m) => m.ownsNamespace(ns)).map((m) => m.identity);
    if (owners.length > 1) throw new Error(`${ns} acted on by ${owners.join(" and ")} at ${w.clock.now()}`);
  }
}

/** One round of every replica given, one after another, then the clock moves a retry period. */
async function rounds(w: World, n: number, who = [...w.replicas.values()]): Promise<void> {
  for (let i = 0; i < n; i++) {
    for (const m of who) {
      await m.tick();
      expectOneOwnerEach(w);
    }
    w.clock.advance(TIMINGS.retryPeriodMs);
    expectOneOwnerEach(w);
  }
}

const ownerMap = (w: World) =>
  Object.fromEntries(
    NAMESPACES.map((ns) => [
      ns,
      [...w.replicas.values()]
        .filter((m) => m.ownsNamespace(ns))
        .map((m) => m.identity)
        .join(","),
    ]),
  );
/** The ring's choice among members when `holder` held every namespace before. */
const ringChoice = (members: string[], holder: string) =>
  Object.fromEntries(shareOut(buildRing(members), NAMESPACES, new Map(NAMESPACES.map((ns) => [ns, holder]))));

describe("shard membership", () => {
  it("a single replica owns every namespace after its first round", async () => {
    const w = aWorld();
    const a = aReplica(w, "a");
    await a.tick();
    expect(a.owned()).toEqual([...NAMESPACES].sort());
    expect([...w.store.markers.values()].map((m) => m.holder)).toEqual(NAMESPACES.map(() => "a"));
  });

  it("two replicas share the namespaces as the ring says, three each, each owned by exactly one", async () => {
    const w = aWorld();
    aReplica(w, "a");
    aReplica(w, "b");
    await rounds(w, 4);
    // a's first round saw no other shard Lease and took every namespace; it keeps three.
    expect(ownerMap(w)).toEqual(ringChoice(["a", "b"], "a"));
    expect(Object.values(ownerMap(w)).filter((o) => o === "a")).toHaveLength(3);
  });

  it('a joining replica starts on a namespace only after the old owner\'s writes settled and it wrote holder ""', async () => {
    const w = aWorld();
    let settle: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const a = aReplica(w, "a", { writesSettled: () => settled });
    await a.tick();
    const b = aReplica(w, "b");
    const moving = NAMESPACES.filter((ns) => ringChoice(["a", "b"], "a")[ns] === "b");
    expect(moving.length).toBeGreaterThan(0);
    await b.tick(); // its shard Lease is live now; a must hand over
    const releasing = a.tick();
    await new Promise((resolve) => setImmediate(resolve));
    // a stopped acting, but has not acknowledged: b waits.
    for (const ns of moving) expect(a.ownsNamespace(ns)).toBe(false);
    await b.tick();
    for (const ns of moving) expect(b.ownsNamespace(ns)).toBe(false);
    expect(
      b
        .plan()
        ?.decisions.filter((d) => d.action === "wait")
        .map((d) => d.namespace)
        .sort(),
    ).toEqual([...moving].sort());
    settle();
    await releasing;
    await b.tick();
    for (const ns of moving) expect(b.ownsNamespace(ns)).toBe(true);
    const firstAck = w.store.markerWrites.findIndex((x) => x.holder === "");
    const firstTake = w.store.markerWrites.findIndex((x) => x.by === "b");
    expect(firstAck).toBeGreaterThanOrEqual(0);
    expect(firstTake).toBeGreaterThan(firstAck);
  });

  it("a replica whose renewals fail stops owning at renewDeadline, between rounds", async () => {
    const w = aWorld();
    const a = aReplica(w, "a");
    await a.tick();
    expect(a.ownsNamespace("shop")).toBe(true);
    w.store.failing.add("a");
    w.clock.advance(TIMINGS.renewDeadlineMs - 1);
    expect(a.ownsNamespace("shop")).toBe(true);
    w.clock.advance(1);
    expect(a.ownsNamespace("shop")).toBe(false);
    expect(a.owned()).toEqual([]);
  });

  it("a dead replica's namespaces move once its lease expired plus the skew margin, not before", async () => {
    const w = aWorld();
    const a = aReplica(w, "a");
    const b = aReplica(w, "b");
    await rounds(w, 3);
    const bs = NAMESPACES.filter((ns) => b.ownsNamespace(ns));
    expect(bs.length).toBeGreaterThan(0);
    const lastRenewal = w.store.shards.get("b")!.renewTime;
    w.replicas.delete("b"); // b crashes: no more rounds, no release
    while (w.clock.now() <= lastRenewal + TIMINGS.leaseDurationMs + TIMINGS.skewMarginMs) {
      await a.tick();
      for (const ns of bs) expect(a.ownsNamespace(ns)).toBe(false);
      w.clock.advance(250);
    }
    await a.tick();
    expect(a.owned()).toEqual([...NAMESPACES].sort());
  });

  it("a fenced replica that renews again re-confirms its markers before acting", async () => {
    const w = aWorld();
    const a = aReplica(w, "a");
    await a.tick();
    w.store.failing.add("a");
    w.clock.advance(TIMINGS.renewDeadlineMs);
    await a.tick();
    expect(w.events.filter((e) => e.startsWith("a lost")).length).toBe(NAMESPACES.length);
    w.store.failing.delete("a");
    const writesBefore = w.store.markerWrites.length;
    await a.tick();
    expect(a.owned()).toEqual([...NAMESPACES].sort());
    expect(w.store.markerWrites.length - writesBefore).toBe(NAMESPACES.length);
  });

  it("stop hands every namespace back and deletes its shard Lease, so the other takes over without waiting for expiry", async () => {
    const w = aWorld();
    const a = aReplica(w, "a");
    const b = aReplica(w, "b");
    await rounds(w, 3);
    await b.stop();
    w.replicas.delete("b");
    expect(w.store.shards.has("b")).toBe(false);
    await a.tick();
    expect(a.owned()).toEqual([...NAMESPACES].sort());
  });

  it.each([
    ["a lease duration not above the renew deadline", { leaseDurationMs: 3_000 }, /lease duration/],
    ["a renew deadline not above the retry period", { retryPeriodMs: 3_000 }, /renew deadline/],
    ["a negative skew margin", { skewMarginMs: -1 }, /skew margin/],
  ])("refuses %s", (_name, bad, message) => {
    expect(() => aReplica(aWorld(), "a", bad)).toThrow(message);
  });
});
