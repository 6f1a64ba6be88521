import { describe, expect, it } from "@jest/globals";
import type { KubeObject } from "./kube-objects.js";
import { NS, aPodObject, aPolicyObject, aServiceObject } from "./testing/objects.js";
import { setUp } from "./testing/policy-controller-bed.js";

const KEY = `${NS}/web`;
const PODS = ["web-a", "web-b", "web-c"];

/** Three pods; web-a fails from the start, the others pass; the policy's pass has run after each result, and web-a is past its window of 30s. */
async function aDueReplacement(opts: { leader?: () => boolean } = {}) {
  const spec = {
    evaluation: { failureThreshold: 1 },
    replacement: { after: "30s", maxPerHour: 5, maxPerDay: 5, pauseAboveUnhealthyPercent: 100 },
  };
  const bed = setUp({
    policies: [aPolicyObject("web", spec)],
    services: [aServiceObject("web")],
    pods: PODS.map((name) => aPodObject(name)),
    statusIntervalMs: 0,
    ...(opts.leader ? { leader: opts.leader } : {}),
  });
  const { controller, writer, health, clock, caches } = bed;
  const pass = async () => {
    await controller.policies.reconcile(KEY);
    // The slice cache catches up with the writes, as its watch would.
    for (const s of writer.slices.values()) caches.slices.put(s as KubeObject);
  };
  const probe = (passing: readonly string[]) => {
    for (const pod of PODS) {
      const at = { latencyMs: 1, finishedAt: clock.now() };
      health.record(
        KEY,
        `uid-${pod}`,
        passing.includes(pod)
          ? { success: true, failureClass: "HTTP 200", result: "HTTP 200 in 1 ms", ...at }
          : { success: false, failureKind: "http_status", failureClass: "HTTP 503", result: "HTTP 503 in 1 ms", ...at },
      );
    }
  };
  await pass();
  clock.advance(1_000);
  probe(["web-b", "web-c"]);
  clock.advance(1_000);
  await pass();
  const early = await controller.replacement.reconcile(KEY);
  clock.advance(60_000);
  probe(["web-b", "web-c"]);
  clock.advance(1_000);
  await pass();
  const status = () =>
    writer.statuses.get(KEY)!.status as {
      conditions: Array<{ type: string; status: string; reason: string }>;
      replacements?: Array<{ pod: string }>;
    };
  const blocked = () => {
    const c = status().conditions.find((x) => x.type === "ReplacementBlocked")!;
    return `${c.status} ${c.reason}`;
  };
  return { ...bed, pass, probe, early, status, blocked };
}

describe("the replacement controller", () => {
  it("replaces a due pod on its own reconcile, never in the policy's pass, and the pass mirrors the ledger it charged", async () => {
    const { controller, writer, pass, status } = await aDueReplacement();
    expect(writer.evictions).toEqual([]);
    await controller.replacement.reconcile(KEY);
    expect(writer.evictions.map((e) => e.name)).toEqual(["web-a"]);
    await pass();
    expect(status().replacements?.map((r) => r.pod)).toEqual(["web-a"]);
  });

  it("before the window ends replaces nothing and looks again when it ends", async () => {
    const { writer, early } = await aDueReplacement();
    expect(writer.evictions).toEqual([]);
    // web-a turned Unhealthy at 1 s, the reconcile ran at 2 s: its window of 30 s ends 29 s later.
    expect(early).toEqual({ requeueAfterMs: 29_000 });
  });

  it("holds back on the outage found now, before the status reports it, and the pass reports the block", async () => {
    const { controller, writer, probe, clock, blocked } = await aDueReplacement();
    clock.advance(1_000);
    probe([]);
    await controller.replacement.reconcile(KEY);
    expect(writer.evictions).toEqual([]);
    await controller.policies.reconcile(KEY);
    expect(blocked()).toBe("True FailOpen");
  });

  it("replaces nothing once the leadership is lost, though the status says a pod is due", async () => {
    let leading = true;
    const { controller, writer } = await aDueReplacement({ leader: () => leading });
    leading = false;
    await controller.replacement.reconcile(KEY);
    expect(writer.evictions).toEqual([]);
  });

  it("replaces nothing for a policy whose Service is gone (its status no longer Ready)", async () => {
    const { controller, writer, caches } = await aDueReplacement();
    caches.services.remove(NS, "web");
    await controller.policies.reconcile(KEY);
    await controller.replacement.reconcile(KEY);
    expect(writer.evictions).toEqual([]);
  });

  it("waits for the slice cache to show the policy's own writes, and looks again in a second", async () => {
    const { controller, writer, caches } = await aDueReplacement();
    for (const s of caches.slices.list()) caches.slices.remove(s.metadata?.namespace, s.metadata!.name!);
    expect(await controller.replacement.reconcile(KEY)).toEqual({ requeueAfterMs: 1_000 });
    expect(writer.evictions).toEqual([]);
  });
});
