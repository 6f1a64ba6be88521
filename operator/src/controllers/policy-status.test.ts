import { describe, expect, it } from "@jest/globals";
import type { EventInput } from "../adapters/event-recorder.js";
import { aStatusPodInput } from "../domain/testing/builders.js";
import { FakeClock } from "../runtime/testing/fake-clock.js";
import type { NamedPolicy } from "./kube-objects.js";
import { PolicyStatusPart } from "./policy-status.js";
import { StatusVersions } from "./status-versions.js";
import { MemoryWriter } from "./testing/memory-writer.js";
import { aPolicyObject } from "./testing/objects.js";
import { quietLogger } from "./testing/quiet-logger.js";

const NOW = Date.UTC(2026, 0, 1, 12);

function setUp(leader = true) {
  const writer = new MemoryWriter();
  writer.seedPolicy("shop/web", "1");
  const clock = new FakeClock(NOW);
  const events: EventInput[] = [];
  const part = new PolicyStatusPart({ versions: new StatusVersions(writer, clock), events: { record: (e) => events.push(e) }, isLeader: () => leader, statusIntervalMs: 1_000 });
  const policy = aPolicyObject("web", {}, { resourceVersion: "1" }) as NamedPolicy;
  return { writer, part, events, policy, clock };
}

const statusWrites = (w: MemoryWriter) => w.calls.filter((c) => c.startsWith("status")).length;

describe("the status-and-Events part", () => {
  it.each([
    { name: "the leader writes a changed status", leader: true, writes: 1 },
    { name: "a standby writes nothing", leader: false, writes: 0 },
  ])("$name", async ({ leader, writes }) => {
    const { writer, part, policy } = setUp(leader);
    await part.write(quietLogger(), policy, { readiness: { reason: "Reconciled" }, pods: [aStatusPodInput()] }, NOW);
    expect(statusWrites(writer)).toBe(writes);
  });

  it("writes nothing when the status it would write is the one last written", async () => {
    const { writer, part, policy } = setUp();
    await part.write(quietLogger(), policy, { readiness: { reason: "Reconciled" }, pods: [aStatusPodInput()] }, NOW);
    await part.write(quietLogger(), policy, { readiness: { reason: "Reconciled" }, pods: [aStatusPodInput()] }, NOW + 5_000);
    expect(statusWrites(writer)).toBe(1);
  });

  it("holds a second change within the interval back and says when to look again", async () => {
    const { writer, part, policy } = setUp();
    await part.write(quietLogger(), policy, { readiness: { reason: "Reconciled" }, pods: [aStatusPodInput()] }, NOW);
    const again = await part.write(quietLogger(), policy, { readiness: { reason: "ServiceNotFound" } }, NOW + 400);
    expect(statusWrites(writer)).toBe(1);
    expect(again).toEqual({ requeueAfterMs: 600 });
  });

  it("records an InvalidSpec Event on the policy when the spec turns invalid", async () => {
    const { part, policy, events } = setUp();
    await part.write(quietLogger(), policy, { readiness: { reason: "InvalidSpec", message: "spec.probe.port: required" } }, NOW);
    expect(events.map((e) => [e.reason, e.regarding.kind])).toContainEqual(["InvalidSpec", "HealthProbePolicy"]);
  });

  it.each([
    { name: "an eviction is a Normal Replaced Event on the policy and on the pod", outcome: { outcome: "evicted" as const }, reason: "Replaced", type: "Normal" },
    { name: "a PDB refusal is a Warning ReplacementBlocked Event", outcome: { outcome: "pdb_blocked" as const, message: "no", waitUntil: NOW, backoffMs: 5 }, reason: "ReplacementBlocked", type: "Warning" },
  ])("$name", ({ outcome, reason, type }) => {
    const { part, policy, events } = setUp();
    const attempt = { podUid: "uid-web-a", podName: "web-a", method: "Evict" as const, charge: { policies: ["shop/web"], operator: true, entry: { pod: "web-a", uid: "uid-web-a", time: NOW, method: "Evict" as const }, reattempt: false } };
    part.recordReplacements(policy, "1h", [{ attempt, ...outcome }]);
    expect(events.map((e) => [e.regarding.kind, e.reason, e.type])).toEqual([
      ["HealthProbePolicy", reason, type],
      ["Pod", reason, type],
    ]);
  });

  it("records no Event when the pod was already gone", () => {
    const { part, policy, events } = setUp();
    const attempt = { podUid: "u", podName: "p", method: "Evict" as const, charge: { policies: [], operator: false, entry: { pod: "p", uid: "u", time: NOW, method: "Evict" as const }, reattempt: false } };
    part.recordReplacements(policy, "1h", [{ attempt, outcome: "gone" }]);
    expect(events).toEqual([]);
  });
});

describe("the status-and-Events part on a stale slice cache", () => {
  it("keeps the last ReplacementBlocked condition when the replacement part did not run", async () => {
    const { writer, part, policy } = setUp();
    const blocked = { blocked: true, reason: "Budget", message: "1 due replacement is waiting: web-a: hourly budget used" };
    await part.write(quietLogger(), policy, { readiness: { reason: "Reconciled" }, pods: [aStatusPodInput()], replacementCondition: blocked }, NOW);
    await part.write(quietLogger(), policy, { readiness: { reason: "Reconciled" }, pods: [aStatusPodInput()], replacementCondition: "unchanged" }, NOW + 5_000);
    expect(statusWrites(writer)).toBe(1);
  });
});
