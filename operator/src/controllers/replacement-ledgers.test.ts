import { describe, expect, it } from "@jest/globals";
import type { LedgerEntry } from "../domain/budget.js";
import { FakeClock } from "../runtime/testing/fake-clock.js";
import type { NamedPolicy } from "./kube-objects.js";
import { StaleCacheError } from "./policy-writer.js";
import { LedgerStore } from "./replacement-ledgers.js";
import { StatusVersions } from "./status-versions.js";
import { MemoryWriter } from "./testing/memory-writer.js";
import { aPolicyObject } from "./testing/objects.js";
import { quietLogger } from "./testing/quiet-logger.js";

const NOW = Date.UTC(2026, 0, 1, 12);
const entry = (pod: string, minutesAgo = 0): LedgerEntry => ({
  pod,
  uid: `uid-${pod}`,
  time: NOW - minutesAgo * 60_000,
  method: "Evict",
});

function aStore(max12h = 5) {
  const writer = new MemoryWriter();
  const remaining: number[] = [];
  const versions = new StatusVersions(writer, new FakeClock(NOW));
  const store = new LedgerStore({
    writer,
    versions,
    operatorNamespace: "ops",
    maxReplacementsPer12h: max12h,
    onOperatorRemaining: (n) => remaining.push(n),
  });
  return { writer, store, remaining };
}

const policyB = (): NamedPolicy => aPolicyObject("b", {}, { resourceVersion: "1" }) as NamedPolicy;

describe("the replacement ledgers", () => {
  it("refuses a charge over a ledger copy another worker charged in the meantime (no lost charge)", async () => {
    const { writer, store } = aStore();
    writer.seedPolicy("shop/b", "1");
    const readByB = store.policy(policyB()); // B's reconcile reads its ledger, then awaits
    const readByA = store.policy(policyB()); // A's reconcile charges B's ledger meanwhile
    await store.updatePolicy(readByA, "charge", entry("web-a"), NOW);
    await expect(store.updatePolicy(readByB, "charge", entry("web-b"), NOW)).rejects.toBeInstanceOf(StaleCacheError);
    expect((writer.statuses.get("shop/b")!.status as { replacements: unknown[] }).replacements).toHaveLength(1);
  });

  it("reads this process's own last write while the cache still shows the version it replaced", async () => {
    const { writer, store } = aStore();
    writer.seedPolicy("shop/b", "1");
    await store.updatePolicy(store.policy(policyB()), "charge", entry("web-a"), NOW);
    const again = store.policy(policyB());
    expect(again.entries?.map((e) => e.pod)).toEqual(["web-a"]);
    // ...and charges over that version, so a second charge in a row is not refused.
    await store.updatePolicy(again, "charge", entry("web-b", 1), NOW);
    expect((writer.statuses.get("shop/b")!.status as { replacements: unknown[] }).replacements).toHaveLength(2);
  });

  it("takes the cache's version once it shows a write by someone else", async () => {
    const { writer, store } = aStore();
    writer.seedPolicy("shop/b", "1");
    await store.updatePolicy(store.policy(policyB()), "charge", entry("web-a"), NOW);
    const elsewhere = aPolicyObject("b", {}, { resourceVersion: "other" }) as NamedPolicy;
    elsewhere.status = { replacements: [] };
    expect(store.policy(elsewhere).entries).toEqual([]);
  });

  it("says a ledger it cannot read is unreadable (null), never empty", () => {
    const { store } = aStore();
    const broken = policyB();
    broken.status = { replacements: "not a list" };
    expect(store.policy(broken).entries).toBeNull();
  });

  it("refuses an operator-wide charge over a ConfigMap someone changed after it was read", async () => {
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
  ])("reports the operator-wide remaining budget: $name", async ({ charges, read, remaining }) => {
    const { store, remaining: reported } = aStore(5);
    let ledger = await store.readOperator(quietLogger(), NOW);
    for (let i = 0; i < charges; i++) ledger = await store.updateOperator(ledger, "charge", entry(`web-${i}`, i), NOW);
    if (read) await store.readOperator(quietLogger(), NOW);
    expect(reported.at(-1)).toBe(remaining);
  });
});
