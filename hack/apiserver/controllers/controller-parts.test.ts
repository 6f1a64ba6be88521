import { describe, it, expect } from "@jest/globals";
import type { V1Pod } from "@kubernetes/client-node";
import { Expectations, EXPECTATIONS_TTL_MS } from "./expectations.js";
import { IpAllocator } from "./ip-allocator.js";
import { OwnedPods } from "./owned-pods.js";
import { compareForDeletion } from "./pods.js";
import { WorkQueue } from "./work-queue.js";
import { waitFor } from "../../../test/support/wait-for.js";

function aPod(opts: {
  name: string;
  nodeName?: string;
  phase?: string;
  ready?: boolean;
  readySince?: string;
  restarts?: number;
  created?: string;
}): V1Pod {
  return {
    metadata: {
      name: opts.name,
      namespace: "default",
      creationTimestamp: (opts.created ?? "2026-01-01T00:00:00Z") as unknown as Date,
    },
    spec: { containers: [{ name: "app" }], ...(opts.nodeName ? { nodeName: opts.nodeName } : {}) },
    status: {
      phase: opts.phase ?? "Running",
      conditions: [
        {
          type: "Ready",
          status: opts.ready === false ? "False" : "True",
          lastTransitionTime: (opts.readySince ?? "2026-01-01T00:00:00Z") as unknown as Date,
        },
      ],
      containerStatuses: [{ name: "app", image: "x", imageID: "", ready: true, restartCount: opts.restarts ?? 0 }],
    },
  };
}

describe("pods to delete first", () => {
  const cases: Array<[string, V1Pod, V1Pod]> = [
    ["an unscheduled pod before a scheduled one", aPod({ name: "a" }), aPod({ name: "b", nodeName: "n1" })],
    ["a pending pod before a running one", aPod({ name: "a", phase: "Pending" }), aPod({ name: "b" })],
    ["a not-ready pod before a ready one", aPod({ name: "a", ready: false }), aPod({ name: "b" })],
    [
      "a pod ready for less time before one ready for longer",
      aPod({ name: "a", readySince: "2026-01-02T00:00:00Z" }),
      aPod({ name: "b", readySince: "2026-01-01T00:00:00Z" }),
    ],
    ["a pod with more restarts before one with fewer", aPod({ name: "a", restarts: 3 }), aPod({ name: "b" })],
    ["a newer pod before an older one", aPod({ name: "a", created: "2026-01-03T00:00:00Z" }), aPod({ name: "b" })],
  ];
  it.each(cases)("ranks %s", (_name, first, second) => {
    expect(compareForDeletion(first, second)).toBeLessThan(0);
    expect(compareForDeletion(second, first)).toBeGreaterThan(0);
    expect([second, first].sort(compareForDeletion)[0]).toBe(first);
  });
});

describe("pod address allocation", () => {
  it("skips the network and broadcast addresses", () => {
    const ips = new IpAllocator("10.0.0.0/30");
    expect([ips.allocate("a"), ips.allocate("b"), ips.allocate("c")]).toEqual(["10.0.0.1", "10.0.0.2", undefined]);
  });

  it("hands an owner the same address twice", () => {
    const ips = new IpAllocator("127.0.10.0/24");
    expect(ips.allocate("a")).toBe(ips.allocate("a"));
  });

  it("reuses an address only after its owner is released", () => {
    const ips = new IpAllocator("10.0.0.0/30");
    ips.allocate("a");
    ips.allocate("b");
    expect(ips.allocate("c")).toBeUndefined();
    ips.release("a");
    expect(ips.allocate("c")).toBe("10.0.0.1");
  });

  it("keeps addresses reserved from existing pods", () => {
    const ips = new IpAllocator("10.0.0.0/29");
    ips.reserve("old", "10.0.0.1");
    expect(ips.allocate("new")).toBe("10.0.0.2");
  });

  it.each(["10.0.0.0", "10.0.0.0/33", "fd00::/64", "10.0.0.0/31"])("rejects the unusable CIDR %s", (cidr) => {
    expect(() => new IpAllocator(cidr)).toThrow(/CIDR/);
  });
});

describe("expectations", () => {
  it("are satisfied once every expected creation is observed", () => {
    const e = new Expectations(() => 0);
    e.expectCreations("ns/rs", 2);
    e.creationObserved("ns/rs");
    expect(e.satisfied("ns/rs")).toBe(false);
    e.creationObserved("ns/rs");
    expect(e.satisfied("ns/rs")).toBe(true);
  });

  it("are satisfied once every expected deletion is observed, each pod once", () => {
    const e = new Expectations(() => 0);
    e.expectDeletions("ns/rs", ["ns/a", "ns/b"]);
    e.deletionObserved("ns/rs", "ns/a");
    e.deletionObserved("ns/rs", "ns/a");
    expect(e.satisfied("ns/rs")).toBe(false);
    e.deletionObserved("ns/rs", "ns/b");
    expect(e.satisfied("ns/rs")).toBe(true);
  });

  it("expire so a lost event cannot wedge a key", () => {
    let now = 0;
    const e = new Expectations(() => now);
    e.expectCreations("ns/rs", 1);
    now = EXPECTATIONS_TTL_MS;
    expect(e.satisfied("ns/rs")).toBe(false);
    now = EXPECTATIONS_TTL_MS + 1;
    expect(e.satisfied("ns/rs")).toBe(true);
  });
});

describe("work queue", () => {
  it("syncs a key added while it is being synced once more, not concurrently", async () => {
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const q = new WorkQueue(
      "t",
      async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        calls++;
        if (calls === 1) await gate;
        running--;
      },
      () => {},
    );
    q.add("k");
    await waitFor(() => calls === 1);
    q.add("k");
    q.add("k");
    release();
    await waitFor(() => calls === 2);
    await q.shutDown();
    expect(calls).toBe(2);
    expect(maxRunning).toBe(1);
  });

  it("retries a failing key until it succeeds and reports each failure", async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const q = new WorkQueue(
      "t",
      async () => {
        calls++;
        if (calls < 3) throw new Error("boom");
      },
      (_k, err) => errors.push(err),
      1,
      5,
    );
    q.add("k");
    await waitFor(() => calls === 3);
    await q.shutDown();
    expect(errors).toHaveLength(2);
    expect(String((errors[0] as Error).message)).toContain("syncing k");
  });
});

describe("a ReplicaSet's owned pods", () => {
  const labeled = (pod: V1Pod, labels: Record<string, string>): V1Pod => ({
    ...pod,
    metadata: { ...pod.metadata, labels },
  });
  const counts = (o: OwnedPods) => ({ active: o.active, ready: o.ready, labeled: o.labeled });
  const owned = () => {
    const o = new OwnedPods("uid/1/false", [["app", "web"]]);
    o.set("default/a", labeled(aPod({ name: "a" }), { app: "web" }));
    o.set("default/b", labeled(aPod({ name: "b", ready: false }), { app: "web" }));
    return o;
  };
  const terminating = (pod: V1Pod): V1Pod => ({
    ...pod,
    metadata: { ...pod.metadata, deletionTimestamp: new Date(0) },
  });

  it.each([
    ["counts active, ready and fully labeled pods", (_o: OwnedPods) => {}, { active: 2, ready: 1, labeled: 2 }],
    [
      "counts a pod that turns ready once",
      (o: OwnedPods) => o.set("default/b", labeled(aPod({ name: "b" }), { app: "web" })),
      { active: 2, ready: 2, labeled: 2 },
    ],
    [
      "stops counting a terminating pod",
      (o: OwnedPods) => o.set("default/a", terminating(labeled(aPod({ name: "a" }), { app: "web" }))),
      { active: 1, ready: 0, labeled: 1 },
    ],
    [
      "stops counting a failed pod",
      (o: OwnedPods) => o.set("default/a", labeled(aPod({ name: "a", phase: "Failed" }), { app: "web" })),
      { active: 1, ready: 0, labeled: 1 },
    ],
    [
      "counts a pod without the template's labels as active but not fully labeled",
      (o: OwnedPods) => o.set("default/a", labeled(aPod({ name: "a" }), { app: "web-2" })),
      { active: 2, ready: 1, labeled: 1 },
    ],
    [
      "forgets a pod that is no longer its own",
      (o: OwnedPods) => o.set("default/a", undefined),
      { active: 1, ready: 0, labeled: 1 },
    ],
  ])("%s", (_name, change, want) => {
    const o = owned();
    change(o);
    expect(counts(o)).toEqual(want);
    expect(o.activePods()).toHaveLength(want.active);
  });

  it("counts as available only pods ready for minReadySeconds", () => {
    const o = new OwnedPods("v", []);
    o.set("default/old", aPod({ name: "old", readySince: "2026-01-01T00:00:00Z" }));
    o.set("default/new", aPod({ name: "new", readySince: "2026-01-01T00:00:50Z" }));
    const now = Date.parse("2026-01-01T00:01:00Z");
    expect(o.available(0, now)).toBe(2);
    expect(o.available(30, now)).toBe(1);
  });

  it("hands out each touched pod once", () => {
    const o = new OwnedPods("v", []);
    o.touch("default/a");
    o.touch("default/b");
    o.touch("default/a");
    expect(o.takeTouched().sort()).toEqual(["default/a", "default/b"]);
    expect(o.takeTouched()).toEqual([]);
  });
});
