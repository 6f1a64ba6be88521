import { describe, expect, it } from "@jest/globals";
import type { KubeObject } from "./kube-objects.js";
import { NS, aPodObject, aPolicyObject, aServiceObject } from "./testing/objects.js";
import { setUp } from "./testing/policy-controller-bed.js";

// Two policies over the same three pods: "web" replaces, "web-too" (Service web-too) watches or
// replaces too. Both first see web-a failing and the others passing; then web-too's probes change
// as the row says, and the two policies reconcile in either order.
const A = `${NS}/web`;
const B = `${NS}/web-too`;
const PODS = ["web-a", "web-b", "web-c"];
const REPLACING = { after: "30s", maxPerHour: 5, maxPerDay: 5, pauseAboveUnhealthyPercent: 100 };

type Passing = readonly string[];

async function decide(row: { b: Record<string, unknown>; bPasses: Passing }, order: readonly string[]) {
  const spec = { evaluation: { failureThreshold: 1 }, replacement: REPLACING };
  const { controller, writer, health, clock, caches } = setUp({
    policies: [aPolicyObject("web", spec), aPolicyObject("web-too", { ...spec, serviceName: "web-too", ...row.b })],
    services: [aServiceObject("web"), aServiceObject("web-too")],
    pods: PODS.map((name) => aPodObject(name)),
    statusIntervalMs: 0,
  });
  // The policy's pass, its replacement (woken by the status the pass wrote), and the pass that reports the outcome.
  const reconcile = async (key: string) => {
    await controller.policies.reconcile(key);
    // The slice cache catches up with the writes, as its watch would.
    for (const s of writer.slices.values()) caches.slices.put(s as KubeObject);
    await controller.replacement.reconcile(key);
    await controller.policies.reconcile(key);
  };
  const probe = (key: string, passing: Passing) => {
    for (const pod of PODS) {
      const pass = passing.includes(pod);
      const at = { latencyMs: 1, finishedAt: clock.now() };
      health.record(
        key,
        `uid-${pod}`,
        pass
          ? { success: true, failureClass: "HTTP 200", result: "HTTP 200 in 1 ms", ...at }
          : { success: false, failureKind: "http_status", failureClass: "HTTP 503", result: "HTTP 503 in 1 ms", ...at },
      );
    }
  };
  for (const key of [A, B]) await reconcile(key);
  clock.advance(1_000);
  probe(A, ["web-b", "web-c"]);
  probe(B, ["web-b", "web-c"]);
  clock.advance(2_000);
  for (const key of [A, B]) await reconcile(key);
  // web-a is past its window of 30s for both; web-too's probes now say what the row says.
  clock.advance(60_000);
  probe(A, ["web-b", "web-c"]);
  probe(B, row.bPasses);
  clock.advance(2_000);
  for (const key of order) await reconcile(key);
  const blocked = (key: string) => {
    const c = (
      writer.statuses.get(key)!.status as { conditions: Array<{ type: string; status: string; reason: string }> }
    ).conditions.find((x) => x.type === "ReplacementBlocked");
    return `${c?.status} ${c?.reason}`;
  };
  return { evicted: [...new Set(writer.evictions.map((e) => e.name))].sort(), web: blocked(A), webToo: blocked(B) };
}

describe("two policies over the same pods decide alike whichever reconciles first", () => {
  it.each([
    {
      name: "web-too, which only watches (dryRun), now sees every pod failing: it fails open, and holds web-a back",
      b: { dryRun: true },
      bPasses: [],
      evicted: [],
      web: "True FailOpen",
    },
    {
      name: "web-too fails closed (whenAllUnhealthy=FailClosed): web-a is held back",
      b: { dryRun: true, drain: { whenAllUnhealthy: "FailClosed" } },
      bPasses: [],
      evicted: [],
      web: "True FailClosed",
    },
    {
      name: "web-too, replacing too, fails open: neither replaces",
      b: {},
      bPasses: [],
      evicted: [],
      web: "True FailOpen",
    },
    {
      name: "web-too, which only watches, still sees web-b and web-c Healthy: web-a is replaced",
      b: { dryRun: true },
      bPasses: ["web-b", "web-c"],
      evicted: ["web-a"],
      web: "False NotBlocked",
    },
    {
      name: "web-too, replacing too, agrees: web-a is replaced once",
      b: {},
      bPasses: ["web-b", "web-c"],
      evicted: ["web-a"],
      web: "False NotBlocked",
    },
    {
      name: "web-too, replacing too, sees web-a Healthy again: a veto",
      b: {},
      bPasses: PODS,
      evicted: [],
      web: "True Veto",
    },
  ])("$name", async ({ b, bPasses, evicted, web }) => {
    const first = await decide({ b, bPasses }, [A, B]);
    const second = await decide({ b, bPasses }, [B, A]);
    expect(first).toEqual(second);
    expect(first.evicted).toEqual(evicted);
    expect(first.web).toBe(web);
  });
});
