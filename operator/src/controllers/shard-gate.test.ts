import { describe, expect, it } from "@jest/globals";
import type { ProbeTarget } from "../runtime/probe-scheduler.js";
import {
  fencedEventSink,
  fencedWriter,
  gatedReconcile,
  NotOwnedError,
  ShardedTargets,
  WritesInFlight,
  type NamespaceOwnership,
} from "./shard-gate.js";
import { MemoryWriter } from "./testing/memory-writer.js";

/** Owns exactly the namespaces in the set, as it stands at each call. */
const owning = (owned: Set<string>): NamespaceOwnership => ({ ownsNamespace: (ns) => owned.has(ns) });
const ledger = (namespace: string, name: string) => ({ namespace, name, labels: {}, ownerReferences: [], data: {} });
const slice = (ns: string) => ({ metadata: { namespace: ns, name: "web-1" }, addressType: "IPv4", endpoints: [] });

describe("the write fence", () => {
  it.each<[string, (w: ReturnType<typeof fencedWriter>) => Promise<unknown>]>([
    ["an EndpointSlice create", (w) => w.createEndpointSlice(slice("payments"))],
    ["an EndpointSlice replace", (w) => w.replaceEndpointSlice(slice("payments"))],
    ["an EndpointSlice delete", (w) => w.deleteEndpointSlice("payments", "web-1")],
    ["a status write", (w) => w.replacePolicyStatus({ metadata: { namespace: "payments", name: "web" } }, {})],
    ["an eviction", (w) => w.evictPod("payments", "p", "u")],
    ["a pod delete", (w) => w.deletePod("payments", "p", "u")],
    [
      "a pod condition",
      (w) => w.patchPodCondition("payments", "p", "u", { type: "t", status: "True", reason: "r", message: "m" }),
    ],
    ["a namespace's ConfigMap", (w) => w.writeConfigMap("payments", "cm", {}, undefined)],
    [
      "a policy's ledger ConfigMap",
      (w) => w.writePolicyLedger(ledger("payments", "web-healthprobe-ledger"), undefined),
    ],
  ])("refuses %s in a namespace not owned, and sends nothing", async (_name, write) => {
    const inner = new MemoryWriter();
    const w = fencedWriter(inner, { owner: owning(new Set(["shop"])), writes: new WritesInFlight() });
    await expect(write(w)).rejects.toBeInstanceOf(NotOwnedError);
    expect(inner.calls).toEqual([]);
  });

  it("passes a write in an owned namespace through", async () => {
    const inner = new MemoryWriter();
    const w = fencedWriter(inner, { owner: owning(new Set(["shop"])), writes: new WritesInFlight() });
    await w.createEndpointSlice(slice("shop"));
    expect(inner.calls.length).toBe(1);
  });

  it("asks at the instant of the write: a namespace lost after the reconcile began is refused", async () => {
    const owned = new Set(["shop"]);
    const w = fencedWriter(new MemoryWriter(), { owner: owning(owned), writes: new WritesInFlight() });
    await w.createEndpointSlice(slice("shop"));
    owned.delete("shop");
    await expect(w.replaceEndpointSlice(slice("shop"))).rejects.toBeInstanceOf(NotOwnedError);
  });

  it("lets the operator-wide ledger ConfigMap through on every replica", async () => {
    const inner = new MemoryWriter();
    const w = fencedWriter(inner, {
      owner: owning(new Set()),
      writes: new WritesInFlight(),
      operatorWide: (ns, name) => ns === "healthprobe-system" && name === "ledger",
    });
    await w.writeConfigMap("healthprobe-system", "ledger", { a: "1" }, undefined);
    await expect(w.writeConfigMap("healthprobe-system", "other", {}, undefined)).rejects.toBeInstanceOf(NotOwnedError);
    expect(inner.configMaps.has("healthprobe-system/ledger")).toBe(true);
    // A policy's ledger is never operator-wide, even of that name in that namespace.
    await expect(w.writePolicyLedger(ledger("healthprobe-system", "ledger"), undefined)).rejects.toBeInstanceOf(
      NotOwnedError,
    );
  });

  it("drops a namespace's Events when it is not owned, and sends them when it is", async () => {
    const sent: string[] = [];
    const sink = fencedEventSink(
      { create: async (ns) => void sent.push(ns), patchSeries: async (ns) => void sent.push(ns) },
      { owner: owning(new Set(["shop"])), writes: new WritesInFlight() },
    );
    await sink.create("payments", {} as never);
    await sink.create("shop", {} as never);
    expect(sent).toEqual(["shop"]);
  });
});

describe("writes in flight", () => {
  it("settled resolves only once every write of the namespace was answered", async () => {
    const writes = new WritesInFlight();
    let answer: () => void = () => undefined;
    const write = writes.track("shop", () => new Promise<void>((resolve) => (answer = resolve)));
    let settled = false;
    const waiting = writes.settled("shop").then(() => (settled = true));
    await writes.settled("payments");
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    answer();
    await write;
    await waiting;
    expect(settled).toBe(true);
    expect(writes.inFlight("shop")).toBe(0);
  });
});

describe("sharded probe targets", () => {
  const target = (id: string) => ({ id }) as ProbeTarget;

  it("probes nothing for a policy of a namespace not owned, and counts what it probes", () => {
    const given = new Map<string, number>();
    const t = new ShardedTargets(
      { setTargets: (k, ts) => given.set(k, ts.length), probeNow: () => undefined },
      owning(new Set(["shop"])),
    );
    t.setTargets("shop/web", [target("a"), target("b")]);
    t.setTargets("payments/api", [target("c")]);
    expect(Object.fromEntries(given)).toEqual({ "shop/web": 2, "payments/api": 0 });
    expect(t.total()).toBe(2);
  });

  it("dropping a namespace stops probing each of its policies", () => {
    const owned = new Set(["shop"]);
    const given = new Map<string, number>();
    const t = new ShardedTargets(
      { setTargets: (k, ts) => given.set(k, ts.length), probeNow: () => undefined },
      owning(owned),
    );
    t.setTargets("shop/web", [target("a")]);
    owned.delete("shop");
    t.dropNamespace("shop");
    expect(given.get("shop/web")).toBe(0);
    expect(t.total()).toBe(0);
  });
});

describe("the reconcile gate", () => {
  it.each([
    ["a policy key of a namespace not owned is not reconciled", "payments/web", []],
    ["a policy key of an owned namespace is", "shop/web", ["shop/web"]],
    ["a namespace key not owned is not reconciled", "payments", []],
    ["an owned namespace key is", "shop", ["shop"]],
  ])("%s", async (_name, key, reconciled) => {
    const seen: string[] = [];
    await gatedReconcile(async (k) => void seen.push(k), owning(new Set(["shop"])), 1000)(key);
    expect(seen).toEqual(reconciled);
  });

  it("a write fenced mid-reconcile ends it with a requeue, not an error", async () => {
    const r = gatedReconcile(
      async () => Promise.reject(new Error("writing", { cause: new NotOwnedError("shop", "x") })),
      owning(new Set(["shop"])),
      1000,
    );
    await expect(r("shop/web")).resolves.toEqual({ requeueAfterMs: 1000 });
  });

  it("any other error still fails the reconcile", async () => {
    const r = gatedReconcile(async () => Promise.reject(new Error("boom")), owning(new Set(["shop"])), 1000);
    await expect(r("shop/web")).rejects.toThrow("boom");
  });
});
