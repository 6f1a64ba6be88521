import { describe, expect, it } from "@jest/globals";
import type { HealthRecord } from "../domain/health.js";
import { matchesLabelSelector } from "../domain/label-selector.js";
import { FakeClock } from "../runtime/testing/fake-clock.js";
import { decodeLedgerData } from "../domain/ledger.js";
import type { KubeObject, NamedPolicy, PodObject, PolicyObject } from "./kube-objects.js";
import { parsePolicy, type ParsedPolicy } from "./parsed-policy.js";
import { LedgerStore } from "./replacement-ledgers.js";
import { Replacer } from "./replacer.js";
import { StatusVersions } from "./status-versions.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { MemoryWriter } from "./testing/memory-writer.js";
import { aPodObject, aPolicyObject } from "./testing/objects.js";
import { quietLogger } from "./testing/quiet-logger.js";

const NOW = Date.UTC(2026, 0, 1, 12);
const HOUR = 3_600_000;

function unhealthy(sinceMsAgo: number): HealthRecord {
  return {
    state: "Unhealthy",
    since: NOW - sinceMsAgo,
    unhealthySince: NOW - sinceMsAgo,
    consecutiveSuccesses: 0,
    consecutiveFailures: 10,
    samples: [],
  };
}

const HEALTHY: HealthRecord = {
  state: "Healthy",
  since: NOW - HOUR,
  consecutiveSuccesses: 5,
  consecutiveFailures: 0,
  samples: [],
};

/** Probing started three hours ago; the last result a second ago: fresh evidence. */
const FRESH = { probingSince: NOW - 3 * HOUR, lastResultAt: NOW - 1_000 };

/** A status that reports FailOpen as given. */
function reporting(failOpen: "True" | "False") {
  const reason = failOpen === "True" ? "NoHealthyTarget" : "HealthyTargets";
  const at = new Date(NOW).toISOString();
  return { conditions: [{ type: "FailOpen", status: failOpen, reason, message: "", lastTransitionTime: at }] };
}

function setUp(opts: {
  pods: PodObject[];
  health: Record<string, HealthRecord>;
  replacement?: Record<string, unknown>;
  others?: PolicyObject[];
  evidence?: { probingSince: number; lastResultAt?: number };
  othersHealth?: Record<string, HealthRecord>;
  probing?: (policyKey: string) => boolean;
}) {
  // Most tests here follow one or two pods through the chain: the breaker is off unless a test turns it on.
  const policyObj = aPolicyObject("web", {
    replacement: { after: "1h", maxPerHour: 1, pauseAboveUnhealthyPercent: 100, ...opts.replacement },
  });
  // Every policy has written its status (a policy without one is presumed failing open) unless a test says otherwise.
  for (const p of [policyObj, ...(opts.others ?? [])]) if (!("status" in p)) p.status = reporting("False");
  const policies = new MemoryCache<PolicyObject>([policyObj, ...(opts.others ?? [])]);
  const writer = new MemoryWriter();
  writer.seedPolicy("shop/web", "1");
  const clock = new FakeClock(NOW);
  const versions = new StatusVersions(writer, clock);
  const ledgers = new LedgerStore({
    writer,
    configMaps: new MemoryCache<KubeObject>(),
    statusOf: (p) => versions.read(p).status,
    clock,
    operatorNamespace: "ops",
    maxReplacementsPer12h: 10,
  });
  const replacer = new Replacer({
    policies,
    pods: new MemoryCache(opts.pods),
    health: {
      get: (policy, uid) => (policy === "shop/web" ? opts.health[uid] : opts.othersHealth?.[uid]),
      evidence: () => opts.evidence ?? FRESH,
    },
    isProbing: (key) => opts.probing?.(key) ?? true,
    targetsOf: (p) => opts.pods.filter((pod) => matchesLabelSelector(p.spec.selector, pod.metadata?.labels)),
    writer,
    ledgers,
    versions,
    clock,
    maxReplacementsPer12h: 10,
    pdbBackoffMs: 5_000,
  });
  const parsed = parsePolicy(policyObj);
  if (!parsed.ok) throw new Error(parsed.message);
  return { replacer, writer, policy: parsed.policy as ParsedPolicy & { obj: NamedPolicy } };
}

describe("the replacement part", () => {
  it("charges the policy ledger and the operator-wide ledger before it evicts", async () => {
    const pods = [aPodObject("web-a")];
    const { replacer, writer, policy } = setUp({ pods, health: { "uid-web-a": unhealthy(2 * HOUR) } });
    const result = await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
    expect(writer.calls).toEqual([
      "ledger shop/web-healthprobe-ledger",
      "configmap ops/healthprobe-operator-ledger",
      "evict shop/web-a",
    ]);
    expect(writer.calls).not.toContain("status shop/web");
    expect(result?.outcomes.map((o) => o.outcome)).toEqual(["evicted"]);
  });

  it.each([
    { name: "a pod not yet past its window is not replaced", unhealthyFor: HOUR / 2, replacement: {}, evictions: 0 },
    { name: "a pod past its window is replaced", unhealthyFor: 2 * HOUR, replacement: {}, evictions: 1 },
    {
      name: "nothing is replaced when replacement is disabled",
      unhealthyFor: 2 * HOUR,
      replacement: { enabled: false },
      evictions: 0,
    },
  ])("$name", async ({ unhealthyFor, replacement, evictions }) => {
    const pods = [aPodObject("web-a")];
    const { replacer, writer, policy } = setUp({ pods, health: { "uid-web-a": unhealthy(unhealthyFor) }, replacement });
    await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
    expect(writer.evictions).toHaveLength(evictions);
  });

  it.each([
    {
      name: "1 of 1 target Unhealthy pauses replacement with MassFailure",
      targets: 1,
      evictions: 0,
      reason: "MassFailure",
    },
    {
      name: "1 Unhealthy among 3 targets (the others not Unhealthy, whatever their state) is replaced",
      targets: 3,
      evictions: 1,
      reason: "NoneWaiting",
    },
    { name: "1 of 2 (exactly 50%) is replaced", targets: 2, evictions: 1, reason: "NoneWaiting" },
  ])("the breaker counts every target, not only the candidates: $name", async ({ targets, evictions, reason }) => {
    const pods = ["web-a", "web-b", "web-c"].slice(0, targets).map((n) => aPodObject(n));
    const { replacer, writer, policy } = setUp({
      pods,
      health: { "uid-web-a": unhealthy(2 * HOUR) },
      replacement: { pauseAboveUnhealthyPercent: 50 },
    });
    const result = await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
    expect(writer.evictions).toHaveLength(evictions);
    expect(result?.condition.reason).toBe(reason);
  });

  it("replaces nothing while the policy fails open", async () => {
    const pods = [aPodObject("web-a")];
    const { replacer, writer, policy } = setUp({ pods, health: { "uid-web-a": unhealthy(2 * HOUR) } });
    const result = await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: true });
    expect(writer.evictions).toEqual([]);
    expect(result?.condition).toMatchObject({ blocked: true, reason: "FailOpen" });
  });

  it.each([
    { name: "no result since probing (re)started", evidence: { probingSince: NOW - 1_000 } },
    {
      name: "only a result from before probing (re)started",
      evidence: { probingSince: NOW - 1_000, lastResultAt: NOW - 2_000 },
    },
  ])("replaces nothing on stale evidence: $name", async ({ evidence }) => {
    const pods = [aPodObject("web-a")];
    const { replacer, writer, policy } = setUp({ pods, health: { "uid-web-a": unhealthy(2 * HOUR) }, evidence });
    await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
    expect(writer.evictions).toEqual([]);
  });

  it.each([
    { name: "a probing policy that sees the pod Healthy vetoes", probing: true, evictions: 0 },
    { name: "a policy that is not probing the pod has no say", probing: false, evictions: 1 },
  ])("$name", async ({ probing, evictions }) => {
    const pods = [aPodObject("web-a")];
    const other = aPolicyObject("web-too", { replacement: { after: "1h" } });
    const healthy: HealthRecord = {
      state: "Healthy",
      since: NOW - HOUR,
      consecutiveSuccesses: 5,
      consecutiveFailures: 0,
      samples: [],
    };
    const { replacer, writer, policy } = setUp({
      pods,
      health: { "uid-web-a": unhealthy(2 * HOUR) },
      others: [other],
      othersHealth: { "uid-web-a": healthy },
      probing: (key) => key === "shop/web" || probing,
    });
    writer.seedPolicy("shop/web-too", "1");
    await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
    expect(writer.evictions).toHaveLength(evictions);
  });

  it.each<{
    name: string;
    status: "True" | "False" | undefined;
    otherSeesHealthy: boolean;
    probing: boolean;
    evictions: number;
  }>([
    {
      name: "its status says FailOpen=True, though it is a dryRun policy that sees no pod Healthy",
      status: "True",
      otherSeesHealthy: false,
      probing: true,
      evictions: 0,
    },
    {
      name: "it sees no pod Healthy now, though its status does not say so yet",
      status: "False",
      otherSeesHealthy: false,
      probing: true,
      evictions: 0,
    },
    {
      name: "it sees a pod Healthy again, but its status still says FailOpen=True (as for the policy's own)",
      status: "True",
      otherSeesHealthy: true,
      probing: true,
      evictions: 0,
    },
    {
      name: "it sees a pod Healthy and its status says FailOpen=False",
      status: "False",
      otherSeesHealthy: true,
      probing: true,
      evictions: 1,
    },
    {
      name: "it is not probing the pod, and its status says FailOpen=True",
      status: "True",
      otherSeesHealthy: false,
      probing: false,
      evictions: 0,
    },
    {
      name: "it is not probing the pod, and its status says FailOpen=False: what its store holds is no outage",
      status: "False",
      otherSeesHealthy: false,
      probing: false,
      evictions: 1,
    },
    {
      name: "it has written no status yet (its first says FailOpen=True until its first probes), though it sees a pod Healthy",
      status: undefined,
      otherSeesHealthy: true,
      probing: true,
      evictions: 0,
    },
    {
      name: "it is not probing the pod yet and has written no status",
      status: undefined,
      otherSeesHealthy: false,
      probing: false,
      evictions: 0,
    },
  ])(
    "another policy selecting the pod that fails open holds it back: $name",
    async ({ status, otherSeesHealthy, probing, evictions }) => {
      const pods = [aPodObject("web-a"), aPodObject("web-b")];
      const other = aPolicyObject("web-watch", { dryRun: true, replacement: { after: "1h" } });
      other.status = status === undefined ? undefined : reporting(status);
      const { replacer, writer, policy } = setUp({
        pods,
        health: { "uid-web-a": unhealthy(2 * HOUR) },
        others: [other],
        othersHealth: { "uid-web-a": unhealthy(2 * HOUR), ...(otherSeesHealthy ? { "uid-web-b": HEALTHY } : {}) },
        probing: (key) => key === "shop/web" || probing,
      });
      writer.seedPolicy("shop/web-watch", "1");
      const result = await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
      expect(writer.evictions).toHaveLength(evictions);
      if (evictions === 0)
        expect(result?.condition.message).toContain(
          "policy shop/web-watch, which also selects the pod, is failing open",
        );
    },
  );

  it("another policy that fails closed holds the pod back with FailClosed", async () => {
    const pods = [aPodObject("web-a"), aPodObject("web-b")];
    const other = aPolicyObject("web-closed", {
      drain: { whenAllUnhealthy: "FailClosed" },
      replacement: { after: "1h", pauseAboveUnhealthyPercent: 100 },
    });
    const { replacer, writer, policy } = setUp({
      pods,
      health: { "uid-web-a": unhealthy(2 * HOUR) },
      others: [other],
      othersHealth: { "uid-web-a": unhealthy(2 * HOUR), "uid-web-b": unhealthy(2 * HOUR) },
    });
    writer.seedPolicy("shop/web-closed", "1");
    const result = await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
    expect(writer.evictions).toEqual([]);
    expect(result?.condition).toMatchObject({ blocked: true, reason: "FailClosed" });
  });

  it.each([
    {
      name: "another replacing policy with 2 of 3 of its targets Unhealthy pauses the pod with MassFailure",
      otherUnhealthy: ["web-a", "web-b"],
      evictions: 0,
      reason: "MassFailure",
    },
    { name: "at 1 of 3 it does not", otherUnhealthy: ["web-a"], evictions: 1, reason: "NoneWaiting" },
  ])("the breaker of every selecting policy applies: $name", async ({ otherUnhealthy, evictions, reason }) => {
    // This policy sees only web-a (its breaker off); the other selects all three pods.
    const pods = ["web-a", "web-b", "web-c"].map((n) => aPodObject(n));
    const other = aPolicyObject("web-wide", { replacement: { after: "1h", pauseAboveUnhealthyPercent: 50 } });
    const { replacer, writer, policy } = setUp({
      pods,
      health: { "uid-web-a": unhealthy(2 * HOUR) },
      others: [other],
      othersHealth: Object.fromEntries(
        pods.map((p) => [
          `uid-${p.metadata!.name}`,
          otherUnhealthy.includes(p.metadata!.name!) ? unhealthy(2 * HOUR) : HEALTHY,
        ]),
      ),
    });
    writer.seedPolicy("shop/web-wide", "1");
    const result = await replacer.run(quietLogger(), policy, pods.slice(0, 1), NOW, { failOpen: false });
    expect(writer.evictions).toHaveLength(evictions);
    expect(result?.condition.reason).toBe(reason);
    if (evictions === 0)
      expect(result?.condition.message).toContain(
        "policy shop/web-wide, which also selects the pod, has 2 of 3 targets (66.7%) Unhealthy",
      );
  });

  it("stays within the hourly budget when two pods are due at once", async () => {
    const pods = [aPodObject("web-a"), aPodObject("web-b")];
    const { replacer, writer, policy } = setUp({
      pods,
      health: { "uid-web-a": unhealthy(3 * HOUR), "uid-web-b": unhealthy(2 * HOUR) },
    });
    const result = await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
    expect(writer.evictions.map((e) => e.name)).toEqual(["web-a"]);
    expect(result?.condition).toMatchObject({ blocked: true, reason: "Budget" });
  });

  it("refunds a PodDisruptionBudget refusal, backs off, and returns the refusal without editing the plan", async () => {
    const pods = [aPodObject("web-a")];
    const { replacer, writer, policy } = setUp({ pods, health: { "uid-web-a": unhealthy(2 * HOUR) } });
    writer.evictionOutcome = { outcome: "blocked", message: "Cannot evict pod" };
    const result = (await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false }))!;
    expect(result.plan.blocked).toEqual([]);
    expect(result.plan.attempts).toHaveLength(1);
    expect(result.outcomes[0]).toMatchObject({ outcome: "pdb_blocked", waitUntil: NOW + 5_000 });
    expect(result.condition).toMatchObject({ blocked: true, reason: "PodDisruptionBudget" });
    expect(result.requeueAt).toBe(NOW + 5_000);
    expect(decodeLedgerData(writer.ledgers.get("shop/web-healthprobe-ledger")!.data, "ledger")).toEqual({
      ok: true,
      entries: [],
    });
    expect(result.ledger).toEqual([]);
  });

  it("never evicts a pod it already removed while the cache still shows it alive", async () => {
    const pods = [aPodObject("web-a")];
    const { replacer, writer, policy } = setUp({
      pods,
      health: { "uid-web-a": unhealthy(2 * HOUR) },
      replacement: { maxPerHour: 5, maxPerDay: 5 },
    });
    await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
    await replacer.run(quietLogger(), policy, pods, NOW + 1, { failOpen: false });
    expect(writer.evictions).toHaveLength(1);
  });

  it("never evicts a pod the cache already shows terminating, though the reconcile's list was read before", async () => {
    const listed = aPodObject("web-a");
    const live = { ...listed, metadata: { ...listed.metadata, deletionTimestamp: new Date(NOW).toISOString() } };
    const { replacer, writer, policy } = setUp({ pods: [live], health: { "uid-web-a": unhealthy(2 * HOUR) } });
    await replacer.run(quietLogger(), policy, [listed], NOW, { failOpen: false });
    expect(writer.evictions).toEqual([]);
  });

  it("evicts a pod once when two policies that select it are reconciled at the same time", async () => {
    const pods = [aPodObject("web-a"), aPodObject("web-b")];
    const other = aPolicyObject("web-too", {
      replacement: { after: "1h", maxPerHour: 1, pauseAboveUnhealthyPercent: 100 },
    });
    const health = { "uid-web-a": unhealthy(2 * HOUR), "uid-web-b": HEALTHY };
    const { replacer, writer, policy } = setUp({ pods, health, others: [other], othersHealth: health });
    writer.seedPolicy("shop/web-too", "1");
    const parsed = parsePolicy(other);
    if (!parsed.ok) throw new Error(parsed.message);
    const outcomes = await Promise.all([
      replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false }),
      replacer.run(quietLogger(), parsed.policy as ParsedPolicy & { obj: NamedPolicy }, pods, NOW, { failOpen: false }),
    ]);
    expect(writer.evictions.map((e) => e.name)).toEqual(["web-a"]);
    expect(outcomes.flatMap((r) => r!.outcomes.map((o) => o.outcome)).sort()).toEqual(["evicted", "taken"]);
  });

  it("replaces nothing when its own ledger cannot be read, and says why in a Budget condition", async () => {
    const pods = [aPodObject("web-a")];
    const { replacer, writer, policy } = setUp({ pods, health: { "uid-web-a": unhealthy(2 * HOUR) } });
    policy.obj.status = { replacements: "garbage" };
    const result = await replacer.run(quietLogger(), policy, pods, NOW, { failOpen: false });
    expect(result.condition).toMatchObject({ blocked: true, reason: "Budget" });
    expect(result.condition.message).toMatch(/^status\.replacements is not a list; nothing is replaced/);
    expect(result.ledger).toBeUndefined();
    expect(writer.evictions).toEqual([]);
  });
});
