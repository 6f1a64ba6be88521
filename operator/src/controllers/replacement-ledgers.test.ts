import { describe, expect, it } from "@jest/globals";
import { DAY_MS, type LedgerEntry } from "../domain/budget.js";
import { decodeLedgerData, encodeOperatorLedger, encodePolicyLedger } from "../domain/ledger.js";
import { FakeClock } from "../runtime/testing/fake-clock.js";
import type { KubeObject, NamedPolicy } from "./kube-objects.js";
import { StaleCacheError, type ConfigMapObject } from "./policy-writer.js";
import { LedgerStore } from "./replacement-ledgers.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { MemoryWriter } from "./testing/memory-writer.js";
import { aPolicyObject } from "./testing/objects.js";
import { quietLogger } from "./testing/quiet-logger.js";

const NOW = Date.UTC(2026, 0, 1, 12);
const LEDGER = "b-healthprobe-ledger";
const entry = (pod: string, minutesAgo = 0): LedgerEntry => ({
  pod,
  uid: `uid-${pod}`,
  time: NOW - minutesAgo * 60_000,
  method: "Evict",
});

function aStore(max12h = 5) {
  const writer = new MemoryWriter();
  const cache = new MemoryCache<KubeObject>();
  const clock = new FakeClock(NOW);
  const remaining: number[] = [];
  const store = new LedgerStore({
    writer,
    configMaps: cache,
    statusOf: (p) => p.status as never,
    clock,
    operatorNamespace: "ops",
    maxReplacementsPer12h: max12h,
    onOperatorRemaining: (n) => remaining.push(n),
  });
  /** The cache catches up with what the API server holds. */
  const sync = () => {
    const cm = writer.ledgers.get(`shop/${LEDGER}`);
    if (cm) cache.put(structuredClone(cm) as KubeObject);
    else cache.remove("shop", LEDGER);
  };
  const stored = () => {
    const decoded = decodeLedgerData(writer.ledgers.get(`shop/${LEDGER}`)?.data, "ledger");
    return decoded.ok ? decoded.entries.map((e) => e.pod) : decoded.error;
  };
  return { writer, cache, clock, store, remaining, sync, stored };
}

/** Policy b, with what status.replacements holds (the baseline while it has no ConfigMap). */
const policyB = (replacements?: unknown, uid = "uid-b"): NamedPolicy => {
  const p = aPolicyObject("b", {}, { resourceVersion: "1", uid }) as NamedPolicy;
  if (replacements !== undefined) p.status = { replacements };
  return p;
};

const owned = (uid: string, name = "b") => [
  { apiVersion: "healthprobe.io/v1alpha1", kind: "HealthProbePolicy", name, uid },
];
const ledgerLabel = { "healthprobe.io/ledger": "policy" };
const aConfigMap = (over: { labels?: Record<string, string>; owners?: unknown[]; data?: Record<string, string> }) =>
  ({
    metadata: {
      name: LEDGER,
      namespace: "shop",
      ...(over.labels ? { labels: over.labels } : {}),
      ...(over.owners ? { ownerReferences: over.owners } : {}),
    },
    data: over.data ?? encodeOperatorLedger([{ ...entry("cm-pod", 10), policy: "shop/b" }]),
  }) as ConfigMapObject;

describe("a policy's ledger as read", () => {
  it.each([
    {
      name: "its own ConfigMap is the ledger, whatever status.replacements says",
      cm: aConfigMap({ labels: ledgerLabel, owners: owned("uid-b") }),
      status: encodePolicyLedger([entry("status-pod")]),
      entries: ["cm-pod"],
      pending: false,
    },
    {
      name: "without a ConfigMap, status.replacements is the baseline, to be persisted",
      cm: undefined,
      status: encodePolicyLedger([entry("status-pod")]),
      entries: ["status-pod"],
      pending: true,
    },
    {
      name: "with neither, the ledger is empty and nothing is pending",
      cm: undefined,
      status: undefined,
      entries: [],
      pending: false,
    },
    {
      name: "a deleted namesake's ConfigMap is carried over with the baseline (never fewer charges)",
      cm: aConfigMap({ labels: ledgerLabel, owners: owned("uid-of-a-deleted-b") }),
      status: encodePolicyLedger([entry("status-pod")]),
      entries: ["cm-pod", "status-pod"],
      pending: true,
    },
    {
      name: "a labelled ledger without owners is carried over too",
      cm: aConfigMap({ labels: ledgerLabel }),
      status: undefined,
      entries: ["cm-pod"],
      pending: true,
    },
  ])("$name", ({ cm, status, entries, pending }) => {
    const { store, cache } = aStore();
    if (cm) cache.put({ ...cm, metadata: { ...cm.metadata, resourceVersion: "7" } } as KubeObject);
    const ledger = store.policy(policyB(status));
    expect(ledger.entries?.map((e) => e.pod)).toEqual(entries);
    expect(ledger.pending).toBe(pending);
    expect(ledger.resourceVersion).toBe(cm ? "7" : undefined);
  });

  it.each([
    {
      name: "a user's ConfigMap of that name, not labelled as a ledger",
      cm: aConfigMap({ data: { "app.conf": "x" } }),
      status: undefined,
      problem: `ConfigMap ${LEDGER} is not this policy's replacement ledger (it is not labelled healthprobe.io/ledger=policy); it is left alone, move it away`,
    },
    {
      name: "a labelled ConfigMap that another kind of object owns",
      cm: aConfigMap({ labels: ledgerLabel, owners: [{ kind: "Deployment", name: "b", uid: "d" }] }),
      status: undefined,
      problem: `ConfigMap ${LEDGER} is not this policy's replacement ledger (it belongs to Deployment b); it is left alone, move it away`,
    },
    {
      name: "its own ConfigMap with data that is not JSON",
      cm: aConfigMap({ labels: ledgerLabel, owners: owned("uid-b"), data: { ledger: "{oops" } }),
      status: undefined,
      problem: /^ConfigMap b-healthprobe-ledger is not JSON: /,
    },
    {
      name: "its own ConfigMap with an entry without a uid",
      cm: aConfigMap({
        labels: ledgerLabel,
        owners: owned("uid-b"),
        data: { ledger: '[{"policy":"shop/b","pod":"x"}]' },
      }),
      status: undefined,
      problem: "ConfigMap b-healthprobe-ledger: entry 0: uid must be a non-empty string",
    },
    {
      name: "no ConfigMap and a baseline that is not a list",
      cm: undefined,
      status: "garbage",
      problem: "status.replacements is not a list",
    },
  ])("is unreadable (null, never empty), and says why: $name", ({ cm, status, problem }) => {
    const { store, cache } = aStore();
    if (cm) cache.put({ ...cm, metadata: { ...cm.metadata, resourceVersion: "7" } } as KubeObject);
    const ledger = store.policy(policyB(status));
    expect(ledger.entries).toBeNull();
    if (typeof problem === "string") expect(ledger.problem).toBe(problem);
    else expect(ledger.problem).toMatch(problem);
  });
});

describe("a policy's ledger as written", () => {
  it("creates the ConfigMap from the baseline and the first charge: labelled, owned by the policy", async () => {
    const { store, writer, stored } = aStore();
    await store.updatePolicy(
      store.policy(policyB(encodePolicyLedger([entry("old", 30)]))),
      "charge",
      entry("new"),
      NOW,
    );
    expect(stored()).toEqual(["old", "new"]);
    const cm = writer.ledgers.get(`shop/${LEDGER}`)!;
    expect(cm.metadata?.labels).toMatchObject(ledgerLabel);
    expect(cm.metadata?.ownerReferences).toEqual([{ ...owned("uid-b")[0], controller: true }]);
    expect(writer.calls).not.toContain("status shop/b");
  });

  it.each([
    {
      name: "a baseline moves into a ConfigMap with no charge",
      status: [entry("old", 30)],
      writes: 1,
      entries: ["old"],
    },
    { name: "an empty baseline writes nothing", status: [], writes: 0, entries: [] },
    {
      name: "a baseline older than a day writes nothing",
      status: [entry("ancient", 25 * 60)],
      writes: 0,
      entries: ["ancient"],
    },
  ])("persists what is pending: $name", async ({ status, writes, entries }) => {
    const { store, writer } = aStore();
    const after = await store.persistPending(store.policy(policyB(encodePolicyLedger(status))), NOW);
    expect(writer.calls.filter((c) => c.startsWith("ledger"))).toHaveLength(writes);
    expect(after.entries?.map((e) => e.pod)).toEqual(entries);
  });

  it("takes over a deleted namesake's ConfigMap, keeping its entries, with the policy as owner", async () => {
    const { store, writer, cache, stored } = aStore();
    const seeded = writer.seedConfigMap(aConfigMap({ labels: ledgerLabel, owners: owned("uid-of-a-deleted-b") }));
    cache.put(seeded as KubeObject);
    await store.persistPending(store.policy(policyB()), NOW);
    expect(stored()).toEqual(["cm-pod"]);
    expect(writer.ledgers.get(`shop/${LEDGER}`)!.metadata?.ownerReferences).toEqual([
      { ...owned("uid-b")[0], controller: true },
    ]);
  });

  it("refuses a charge over a ledger copy another worker charged in the meantime (no lost charge)", async () => {
    const { store, stored } = aStore();
    const readByB = store.policy(policyB()); // B's reconcile reads its ledger, then awaits
    const readByA = store.policy(policyB()); // A's reconcile charges B's ledger meanwhile
    await store.updatePolicy(readByA, "charge", entry("web-a"), NOW);
    await expect(store.updatePolicy(readByB, "charge", entry("web-b"), NOW)).rejects.toBeInstanceOf(StaleCacheError);
    expect(stored()).toEqual(["web-a"]);
  });

  it("refuses an update over a version someone else changed (409), and reads the cache again after", async () => {
    const { store, writer, sync, stored } = aStore();
    await store.updatePolicy(store.policy(policyB()), "charge", entry("web-a"), NOW);
    sync();
    const read = store.policy(policyB());
    const theirs = writer.seedConfigMap({ ...writer.ledgers.get(`shop/${LEDGER}`)! });
    await expect(store.updatePolicy(read, "charge", entry("web-b"), NOW)).rejects.toBeInstanceOf(StaleCacheError);
    expect(stored()).toEqual(["web-a"]);
    sync();
    expect(store.policy(policyB()).resourceVersion).toBe(theirs.metadata?.resourceVersion);
  });

  it("reads this process's own last write while the cache still shows the version it replaced", async () => {
    const { store, stored } = aStore();
    await store.updatePolicy(store.policy(policyB()), "charge", entry("web-a"), NOW);
    const again = store.policy(policyB()); // the cache has not seen the ConfigMap yet
    expect(again.entries?.map((e) => e.pod)).toEqual(["web-a"]);
    // ...and charges over that version, so a second charge in a row is not refused.
    await store.updatePolicy(again, "charge", entry("web-b", 1), NOW);
    expect(stored()).toEqual(["web-b", "web-a"]);
  });

  it("keeps reading its own write after another worker's charge over the same older copy was refused", async () => {
    const { store, sync } = aStore();
    await store.updatePolicy(store.policy(policyB()), "charge", entry("first", 5), NOW);
    sync();
    const readByA = store.policy(policyB());
    const readByB = store.policy(policyB());
    await store.updatePolicy(readByA, "charge", entry("web-a"), NOW);
    await expect(store.updatePolicy(readByB, "charge", entry("web-b"), NOW)).rejects.toBeInstanceOf(StaleCacheError);
    expect(store.policy(policyB()).entries?.map((e) => e.pod)).toEqual(["first", "web-a"]);
  });

  it("reads its newest write while the cache shows an earlier write of its own", async () => {
    const { store, writer, cache } = aStore();
    await store.updatePolicy(store.policy(policyB()), "charge", entry("web-a"), NOW);
    const first = structuredClone(writer.ledgers.get(`shop/${LEDGER}`)!);
    await store.updatePolicy(store.policy(policyB()), "charge", entry("web-b", 1), NOW);
    cache.put(first as KubeObject); // the cache shows the first write, not the second yet
    expect(store.policy(policyB()).entries?.map((e) => e.pod)).toEqual(["web-b", "web-a"]);
  });

  it("takes the cache's version once it shows a write after its own", async () => {
    const { store, writer, cache, sync } = aStore();
    await store.updatePolicy(store.policy(policyB()), "charge", entry("web-a"), NOW);
    sync();
    const cm = writer.ledgers.get(`shop/${LEDGER}`)!;
    cache.put({
      ...cm,
      metadata: { ...cm.metadata, resourceVersion: "someone-else" },
      data: encodeOperatorLedger([]),
    } as KubeObject);
    expect(store.policy(policyB()).entries).toEqual([]);
  });

  it("reads afresh a ConfigMap a create finds already there (409) and requeues; the next read counts it", async () => {
    const { store, writer, stored } = aStore();
    writer.seedConfigMap(aConfigMap({ labels: ledgerLabel, owners: owned("uid-b") })); // the cache lags
    await expect(store.updatePolicy(store.policy(policyB()), "charge", entry("web-a"), NOW)).rejects.toBeInstanceOf(
      StaleCacheError,
    );
    expect(writer.calls).toEqual([`ledger shop/${LEDGER}`, `find shop/${LEDGER}`]);
    const again = store.policy(policyB());
    expect(again.entries?.map((e) => e.pod)).toEqual(["cm-pod"]);
    await store.updatePolicy(again, "charge", entry("web-a"), NOW);
    expect(stored()).toEqual(["cm-pod", "web-a"]);
  });

  it("never writes a user's ConfigMap of that name that a create found, and reports it until it is moved away", async () => {
    const { store, writer, clock } = aStore();
    writer.seedConfigMap(aConfigMap({ data: { "app.conf": "x" } })); // not labelled: the cache never shows it
    const baseline = encodePolicyLedger([entry("old", 30)]);
    await expect(store.persistPending(store.policy(policyB(baseline)), NOW)).rejects.toBeInstanceOf(StaleCacheError);
    const blocked = store.policy(policyB(baseline));
    expect(blocked.entries).toBeNull();
    expect(blocked.problem).toMatch(/is not this policy's replacement ledger/);
    expect(writer.ledgers.get(`shop/${LEDGER}`)!.data).toEqual({ "app.conf": "x" });
    // Moved away: once the fresh read has lapsed, the baseline is persisted.
    writer.ledgers.delete(`shop/${LEDGER}`);
    clock.advance(DAY_MS / 24);
    const after = await store.persistPending(store.policy(policyB(baseline)), NOW);
    expect(after.resourceVersion).toBeDefined();
  });

  it("restores a deleted ConfigMap from status.replacements (a 404 on update is a requeue)", async () => {
    const { store, writer, sync, stored } = aStore();
    const first = await store.updatePolicy(store.policy(policyB()), "charge", entry("web-a"), NOW);
    writer.ledgers.delete(`shop/${LEDGER}`);
    await expect(store.updatePolicy(first, "charge", entry("web-b"), NOW)).rejects.toBeInstanceOf(StaleCacheError);
    sync();
    const mirror = encodePolicyLedger(first.entries!);
    await store.persistPending(store.policy(policyB(mirror)), NOW);
    expect(stored()).toEqual(["web-a"]);
  });
});

describe("the operator-wide ledger", () => {
  it("refuses a charge over a ConfigMap someone changed after it was read", async () => {
    const { store } = aStore();
    const first = await store.readOperator(quietLogger(), NOW);
    const second = await store.readOperator(quietLogger(), NOW);
    await store.updateOperator(first, "charge", entry("web-a"), NOW);
    await expect(store.updateOperator(second, "charge", entry("web-b"), NOW)).rejects.toBeInstanceOf(StaleCacheError);
  });

  it.each([
    { name: "reading an empty ledger reports the whole budget", charges: 0, read: true, remaining: 5 },
    { name: "a charge lowers the remaining budget", charges: 1, read: false, remaining: 4 },
    { name: "two charges lower it by two", charges: 2, read: false, remaining: 3 },
  ])("reports the remaining budget: $name", async ({ charges, read, remaining }) => {
    const { store, remaining: reported } = aStore(5);
    let ledger = await store.readOperator(quietLogger(), NOW);
    for (let i = 0; i < charges; i++) ledger = await store.updateOperator(ledger, "charge", entry(`web-${i}`, i), NOW);
    if (read) await store.readOperator(quietLogger(), NOW);
    expect(reported.at(-1)).toBe(remaining);
  });
});
