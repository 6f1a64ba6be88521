// A flap quarantine persisted in status survives a restart: a fresh health store, seeded from
// status, holds the pod out until quarantinedUntil, then lets it back.
import { describe, expect, it } from "@jest/globals";
import type { MemoryWriter } from "./testing/memory-writer.js";
import type { PolicyObject } from "./kube-objects.js";
import { NS, aPodObject, aPolicyObject } from "./testing/objects.js";
import { NOW, setUp } from "./testing/policy-controller-bed.js";

const UNTIL = "2026-01-01T12:01:00Z";
const since = "2026-01-01T11:00:00Z";

/** A new replica (empty health store) over a policy whose status says web-b is quarantined. */
function restartedOperator() {
  const names = ["web-a", "web-b", "web-c", "web-d"];
  const policy: PolicyObject = {
    ...aPolicyObject("web", { evaluation: { flapQuarantine: { flaps: 3, window: "10m", maxBackoff: "10m" } } }),
    status: {
      pods: names.map((name) => ({
        name,
        uid: `uid-${name}`,
        state: "Healthy",
        since,
        drained: name === "web-b",
        reason: "",
        ...(name === "web-b" ? { quarantinedUntil: UNTIL } : {}),
      })),
    },
  };
  return setUp({ policies: [policy], pods: names.map((n, i) => aPodObject(n, { ip: `10.0.0.${i + 1}` })) });
}

type Pod = { name: string; drained: boolean; reason: string; quarantinedUntil?: string };
const podOf = (w: MemoryWriter, name: string) =>
  (w.statuses.get(`${NS}/web`)!.status as { pods: Pod[] }).pods.find((p) => p.name === name)!;

describe("flap quarantine across a restart", () => {
  it("holds the pod out until quarantinedUntil read back from status, wakes up then, and lets it back", async () => {
    const { controller, writer, clock } = restartedOperator();
    const first = await controller.policies.reconcile(`${NS}/web`);
    expect(podOf(writer, "web-b")).toMatchObject({
      drained: true,
      quarantinedUntil: UNTIL,
      reason: `quarantined: flapping (restored from status), back at ${UNTIL} (1 of 2 allowed by maxUnhealthyPercent=50)`,
    });
    expect(podOf(writer, "web-a")).toMatchObject({ drained: false, reason: "admitted: healthy" });
    // The reconcile asks to look again no later than the end of the quarantine.
    expect(first?.requeueAfterMs).toBeLessThanOrEqual(Date.parse(UNTIL) - NOW);

    clock.advance(Date.parse(UNTIL) - NOW);
    await controller.policies.reconcile(`${NS}/web`);
    expect(podOf(writer, "web-b")).toMatchObject({ drained: false, reason: "admitted: healthy" });
    expect(podOf(writer, "web-b").quarantinedUntil).toBeUndefined();
  });
});
