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
  const part = new PolicyStatusPart({
    versions: new StatusVersions(writer, clock),
    events: { record: (e) => events.push(e) },
    isLeader: () => leader,
    statusIntervalMs: 1_000,
  });
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
    await part.write(
      quietLogger(),
      policy,
      { readiness: { reason: "Reconciled" }, pods: [aStatusPodInput()] },
      NOW + 5_000,
    );
    expect(statusWrites(writer)).toBe(1);
  });

  it.each([
    {
      name: "mirrors the ledger the replacement part read or wrote into status.replacements",
      held: [{ pod: "old", uid: "uid-old", time: "2026-01-01T11:00:00Z", method: "Evict" }],
      ledger: [{ pod: "new", uid: "uid-new", time: NOW - 60_000, method: "Evict" as const }],
      mirrored: ["new"],
    },
    {
      name: "keeps what status.replacements held when the replacement part did not run",
      held: [{ pod: "old", uid: "uid-old", time: "2026-01-01T11:00:00Z", method: "Evict" }],
      ledger: undefined,
      mirrored: ["old"],
    },
  ])("$name", async ({ held, ledger, mirrored }) => {
    const { writer, part, policy } = setUp();
    policy.status = { replacements: held };
    const report = {
      readiness: { reason: "Reconciled" as const },
      pods: [aStatusPodInput()],
      ...(ledger ? { ledger } : {}),
    };
    await part.write(quietLogger(), policy, report, NOW);
    const status = writer.statuses.get("shop/web")!.status as {
      replacements: Array<{ pod: string }>;
      replacedInLastDay: number;
    };
    expect(status.replacements.map((r) => r.pod)).toEqual(mirrored);
    expect(status.replacedInLastDay).toBe(1);
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
    await part.write(
      quietLogger(),
      policy,
      { readiness: { reason: "InvalidSpec", message: "spec.probe.port: required" } },
      NOW,
    );
    expect(events.map((e) => [e.reason, e.regarding.kind])).toContainEqual(["InvalidSpec", "HealthProbePolicy"]);
  });

  it.each([
    {
      name: "an eviction is a Normal Replaced Event on the policy and on the pod",
      outcome: { outcome: "evicted" as const },
      reason: "Replaced",
      type: "Normal",
    },
    {
      name: "a PDB refusal is a Warning ReplacementBlocked Event",
      outcome: { outcome: "pdb_blocked" as const, message: "no", waitUntil: NOW, backoffMs: 5 },
      reason: "ReplacementBlocked",
      type: "Warning",
    },
  ])("$name", ({ outcome, reason, type }) => {
    const { part, policy, events } = setUp();
    const attempt = {
      podUid: "uid-web-a",
      podName: "web-a",
      method: "Evict" as const,
      charge: {
        policies: ["shop/web"],
        operator: true,
        entry: { pod: "web-a", uid: "uid-web-a", time: NOW, method: "Evict" as const },
        reattempt: false,
      },
    };
    part.recordReplacements(policy, "1h", [{ attempt, ...outcome }]);
    expect(events.map((e) => [e.regarding.kind, e.reason, e.type])).toEqual([
      ["HealthProbePolicy", reason, type],
      ["Pod", reason, type],
    ]);
  });

  it("records no Event when the pod was already gone", () => {
    const { part, policy, events } = setUp();
    const attempt = {
      podUid: "u",
      podName: "p",
      method: "Evict" as const,
      charge: {
        policies: [],
        operator: false,
        entry: { pod: "p", uid: "u", time: NOW, method: "Evict" as const },
        reattempt: false,
      },
    };
    part.recordReplacements(policy, "1h", [{ attempt, outcome: "gone" }]);
    expect(events).toEqual([]);
  });
});

describe("the status-and-Events part on a stale slice cache", () => {
  it("keeps the last ReplacementBlocked condition when the replacement part did not run", async () => {
    const { writer, part, policy } = setUp();
    const blocked = {
      blocked: true,
      reason: "Budget",
      message: "1 due replacement is waiting: web-a: hourly budget used",
    };
    await part.write(
      quietLogger(),
      policy,
      { readiness: { reason: "Reconciled" }, pods: [aStatusPodInput()], replacementCondition: blocked },
      NOW,
    );
    await part.write(
      quietLogger(),
      policy,
      { readiness: { reason: "Reconciled" }, pods: [aStatusPodInput()], replacementCondition: "unchanged" },
      NOW + 5_000,
    );
    expect(statusWrites(writer)).toBe(1);
  });
});

describe("the status-and-Events part on a suspect rollout", () => {
  const suspect = (pods: number) => ({
    deployment: { name: "web", uid: "uid-deploy" },
    replicaSet: "web-5c8d",
    revision: 2,
    pods: Array.from({ length: pods }, (_, i) => ({ uid: `uid-new-${i}`, name: `web-5c8d-${i}` })),
    older: [{ replicaSet: "web-7d9f", healthy: 2 }],
  });
  const report = (rollouts: ReturnType<typeof suspect>[]) => ({
    readiness: { reason: "Reconciled" as const },
    pods: [aStatusPodInput()],
    rollouts,
  });

  it("sets RolloutSuspect and warns the Deployment and the policy once per suspect ReplicaSet, not again as its pods change", async () => {
    const { writer, part, policy, events } = setUp();
    await part.write(quietLogger(), policy, report([suspect(1)]), NOW);
    const condition = (
      writer.statuses.get("shop/web")!.status as {
        conditions: Array<{ type: string; status: string; message: string }>;
      }
    ).conditions.find((c) => c.type === "RolloutSuspect");
    expect(condition).toMatchObject({
      status: "True",
      message: expect.stringMatching(/^ReplicaSet web-5c8d \(revision 2\) of Deployment web: 1 pod Unhealthy/),
    });
    expect(
      events
        .filter((e) => e.reason === "RolloutSuspect")
        .map((e) => [e.type, e.regarding.kind, e.regarding.name, e.regarding.uid, e.related?.kind]),
    ).toEqual([
      ["Warning", "Deployment", "web", "uid-deploy", "HealthProbePolicy"],
      ["Warning", "HealthProbePolicy", "web", "uid-web", "Deployment"],
    ]);
    // The status is written again (2 pods now), the suspect is the same: no new Warning.
    await part.write(quietLogger(), policy, report([suspect(2)]), NOW + 5_000);
    expect(statusWrites(writer)).toBe(2);
    expect(events.filter((e) => e.reason === "RolloutSuspect")).toHaveLength(2);
  });

  it("clears RolloutSuspect when the suspicion ends, and warns again when it comes back", async () => {
    const { writer, part, policy, events } = setUp();
    await part.write(quietLogger(), policy, report([suspect(1)]), NOW);
    await part.write(quietLogger(), policy, report([]), NOW + 5_000);
    const status = () =>
      (
        writer.statuses.get("shop/web")!.status as {
          conditions: Array<{ type: string; status: string; reason: string }>;
        }
      ).conditions.find((c) => c.type === "RolloutSuspect");
    expect(status()).toMatchObject({ status: "False", reason: "NoSuspectRollout" });
    await part.write(quietLogger(), policy, report([suspect(1)]), NOW + 10_000);
    expect(events.filter((e) => e.reason === "RolloutSuspect")).toHaveLength(4);
  });
});
