import { describe, expect, it } from "@jest/globals";
import type { HealthStore } from "../runtime/health-store.js";
import { NS, aGatedPod, aPolicyObject } from "./testing/objects.js";
import { NOW, setUp } from "./testing/policy-controller-bed.js";

const KEY = `${NS}/web`;
const gatePolicy = (spec: Record<string, unknown> = {}) =>
  aPolicyObject("web", {
    serviceName: undefined,
    drain: { method: "ReadinessGate" },
    evaluation: { failureThreshold: 1 },
    ...spec,
  });
type Outcome = Parameters<HealthStore["record"]>[2];
const ok = (at = NOW): Outcome => ({
  success: true,
  failureClass: "HTTP 200",
  result: "HTTP 200 in 1 ms",
  latencyMs: 1,
  finishedAt: at,
});
const failed = (at = NOW): Outcome => ({
  success: false,
  failureKind: "http_status",
  failureClass: "HTTP 503",
  result: "HTTP 503 in 1 ms",
  latencyMs: 1,
  finishedAt: at,
});

/**
 * Probe results for the pods, then a reconcile, twice over, two seconds apart: the first results
 * end the fail-open of a policy that had probed nothing, and the recovery sweep drains only on a
 * result newer than that.
 */
async function judge(bed: ReturnType<typeof setUp>, results: Record<string, "ok" | "failed">): Promise<void> {
  for (let i = 0; i < 2; i++) {
    bed.clock.advance(2_000);
    for (const [name, r] of Object.entries(results))
      bed.health.record(KEY, `uid-${name}`, r === "ok" ? ok(bed.clock.now()) : failed(bed.clock.now()));
    await bed.controller.policies.reconcile(KEY);
  }
}

type Status = {
  conditions: Array<{ type: string; status: string; reason: string; message: string }>;
  pods: Array<{ name: string; reason: string; drained: boolean }>;
};
const statusOf = (w: ReturnType<typeof setUp>["writer"]) => w.statuses.get(KEY)!.status as Status;
/** The last condition written on each pod: "name=Status/Reason". */
const written = (w: ReturnType<typeof setUp>["writer"]) =>
  [...w.podConditions].map(([k, cs]) => `${k.split("/")[1]}=${cs.at(-1)!.status}/${cs.at(-1)!.reason}`).sort();

describe("the policy reconciler with drain method ReadinessGate", () => {
  it("adopts the pods of a new policy: each gets True before its first probe, and no Service is needed", async () => {
    const { controller, writer, scheduled } = setUp({
      policies: [gatePolicy()],
      pods: [aGatedPod("web-a"), aGatedPod("web-b")],
      services: [],
    });
    await controller.policies.reconcile(KEY);
    expect(scheduled.get(KEY)).toHaveLength(2);
    expect(written(writer)).toEqual(["web-a=True/Admitted", "web-b=True/Admitted"]);
    expect(writer.calls.filter((c) => /^(create|update) /.test(c))).toEqual([]);
    expect(statusOf(writer).conditions.find((c) => c.type === "Ready")?.status).toBe("True");
  });

  it("drains a failing pod with False/Unhealthy within the cap and restores it with True when it recovers", async () => {
    const pods = [aGatedPod("web-a", { gate: "True" }), aGatedPod("web-b", { gate: "True" })];
    const bed = setUp({ policies: [gatePolicy()], pods });
    await bed.controller.policies.reconcile(KEY);
    await judge(bed, { "web-a": "failed", "web-b": "ok" });
    expect(written(bed.writer)).toEqual(["web-a=False/Unhealthy", "web-b=True/Admitted"]);
    expect(bed.writer.podConditions.get(`${NS}/web-a`)!.at(-1)).toMatchObject({
      type: "healthprobe.io/ready",
      message: "drained: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=50",
      lastTransitionTime: expect.any(String),
    });
    expect(statusOf(bed.writer).pods.find((p) => p.name === "web-a")?.drained).toBe(true);
    await judge(bed, { "web-a": "ok" });
    expect(written(bed.writer)).toEqual(["web-a=True/Admitted", "web-b=True/Admitted"]);
  });

  it("writes a condition once: the next reconcile, before the pod cache shows it, writes nothing again", async () => {
    const { controller, writer } = setUp({ policies: [gatePolicy()], pods: [aGatedPod("web-a")] });
    await controller.policies.reconcile(KEY);
    await controller.policies.reconcile(KEY);
    expect(writer.calls.filter((c) => c.startsWith("condition"))).toHaveLength(1);
  });

  it("keeps a new pod out (WarmingUp) until its first success, while the policy already knows its pods", async () => {
    const { controller, writer, caches, health, clock } = setUp({
      policies: [gatePolicy()],
      pods: [aGatedPod("web-a", { gate: "True", reason: "Admitted", message: "admitted: healthy" })],
    });
    health.record(KEY, "uid-web-a", ok());
    await controller.policies.reconcile(KEY);
    health.record(KEY, "uid-web-a", ok());
    caches.pods.put(aGatedPod("web-new"));
    await controller.policies.reconcile(KEY);
    expect(written(writer)).toContain("web-new=False/WarmingUp");
    health.record(KEY, "uid-web-new", ok(NOW + 1_000));
    clock.advance(2_000);
    await controller.policies.reconcile(KEY);
    expect(written(writer)).toContain("web-new=True/Admitted");
  });

  it("fails open: with no pod Healthy, the drained pod gets True again", async () => {
    const pods = [
      aGatedPod("web-a", { gate: "False", reason: "Unhealthy", message: "x" }),
      aGatedPod("web-b", { gate: "True" }),
    ];
    const { controller, writer, health } = setUp({ policies: [gatePolicy()], pods });
    await controller.policies.reconcile(KEY);
    health.record(KEY, "uid-web-a", failed());
    health.record(KEY, "uid-web-b", failed());
    await controller.policies.reconcile(KEY);
    expect(written(writer)).toEqual(["web-a=True/Admitted", "web-b=True/Admitted"]);
  });

  it("writes nothing in dryRun, and says what it would do", async () => {
    const pods = [aGatedPod("web-a", { gate: "True" }), aGatedPod("web-b", { gate: "True" })];
    const bed = setUp({ policies: [gatePolicy({ dryRun: true })], pods });
    await bed.controller.policies.reconcile(KEY);
    await judge(bed, { "web-a": "failed", "web-b": "ok" });
    expect(bed.writer.podConditions.size).toBe(0);
    expect(statusOf(bed.writer).pods.find((p) => p.name === "web-a")?.reason).toMatch(
      /^kept: dryRun \(would be drained/,
    );
  });

  it("reports selected pods without the gate (GateMissing and a Warning), probes them, and says they cannot be drained", async () => {
    const pods = [
      aGatedPod("web-a", { gate: "True" }),
      aGatedPod("web-b", { gate: "True" }),
      aGatedPod("web-c", { gated: false }),
    ];
    const bed = setUp({ policies: [gatePolicy()], pods });
    await bed.controller.policies.reconcile(KEY);
    await judge(bed, { "web-a": "ok", "web-b": "ok", "web-c": "failed" });
    expect(bed.scheduled.get(KEY)).toHaveLength(3);
    expect(statusOf(bed.writer).conditions.find((c) => c.type === "GateMissing")).toMatchObject({
      status: "True",
      reason: "PodsWithoutGate",
      message: expect.stringContaining("1 of 3 selected pods lack readinessGates"),
    });
    expect(statusOf(bed.writer).pods.find((p) => p.name === "web-c")).toMatchObject({
      drained: false,
      reason: expect.stringContaining("(would be drained: longest unhealthy"),
    });
    expect(bed.events.filter((e) => e.reason === "GateMissing").map((e) => e.type)).toEqual(["Warning"]);
    expect(bed.writer.podConditions.has(`${NS}/web-c`)).toBe(false);
  });

  it("leaves pods an older ReadinessGate policy selects to that policy: only the oldest writes their condition", async () => {
    const older = aPolicyObject(
      "web-too",
      { serviceName: undefined, drain: { method: "ReadinessGate" } },
      { creationTimestamp: "2025-12-31T00:00:00Z" },
    );
    const bed = setUp({ policies: [gatePolicy(), older], pods: [aGatedPod("web-a")] });
    await bed.controller.policies.reconcile(KEY);
    expect(bed.writer.podConditions.size).toBe(0);
    await bed.controller.policies.reconcile(`${NS}/web-too`);
    expect(written(bed.writer)).toEqual(["web-a=True/Admitted"]);
  });

  it("writes the other pods when one pod's write fails, then throws so the policy is retried", async () => {
    const { controller, writer } = setUp({ policies: [gatePolicy()], pods: [aGatedPod("web-a"), aGatedPod("web-b")] });
    writer.failNext = { prefix: "condition shop/web-a", error: Object.assign(new Error("boom"), { code: 500 }) };
    await expect(controller.policies.reconcile(KEY)).rejects.toThrow(/failed on 1 of 2 pods/);
    expect(written(writer)).toEqual(["web-b=True/Admitted"]);
    expect(writer.statuses.get(KEY)!.status).toHaveProperty("conditions");
  });
});

describe("releasing pods no ReadinessGate policy holds", () => {
  const held = aGatedPod("web-a", { gate: "False", reason: "Unhealthy", message: "drained" });

  it.each([
    ["the policy is deleted", [], "web-a=True/NoPolicy"],
    ["the policy switched back to EndpointSlice", [aPolicyObject("web")], "web-a=True/NoPolicy"],
    ["the policy is in dryRun", [gatePolicy({ dryRun: true })], "web-a=True/NoPolicy"],
    [
      "the policy no longer selects the pod",
      [gatePolicy({ selector: { matchLabels: { app: "api" } } })],
      "web-a=True/NoPolicy",
    ],
    [
      "the policy is terminating",
      [
        aPolicyObject(
          "web",
          { serviceName: undefined, drain: { method: "ReadinessGate" } },
          { deletionTimestamp: "2026-01-01T00:00:00Z" },
        ),
      ],
      "web-a=True/NoPolicy",
    ],
    ["a ReadinessGate policy still holds it: left to that policy", [gatePolicy()], undefined],
  ])("sets True on a pod left False when %s", async (_name, policies, expected) => {
    const bed = setUp({
      policies,
      pods: [held, aGatedPod("web-b", { gate: "True" }), aGatedPod("web-c", { gated: false })],
    });
    await bed.controller.gateRelease.reconcile(NS);
    expect(written(bed.writer)).toEqual(expected ? [expected] : []);
  });

  it("a standby writes nothing", async () => {
    const bed = setUp({ policies: [], pods: [held], leader: false });
    await bed.controller.gateRelease.reconcile(NS);
    expect(bed.writer.podConditions.size).toBe(0);
  });
});

describe("reporting the Service of a ReadinessGate policy", () => {
  const builtIn = (name: string, endpoints: Array<[string, boolean]>) => ({
    metadata: {
      name,
      namespace: NS,
      labels: {
        "kubernetes.io/service-name": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
    },
    endpoints: endpoints.map(([pod, ready]) => ({
      addresses: ["10.0.0.1"],
      conditions: { ready },
      targetRef: { uid: `uid-${pod}`, name: pod },
    })),
  });

  it("reports the Service's endpoints from the built-in controller's slices, a dual-stack pod once", async () => {
    const slices = [
      builtIn("web-v4", [
        ["web-a", true],
        ["web-b", false],
      ]),
      builtIn("web-v6", [
        ["web-a", true],
        ["web-b", false],
      ]),
    ];
    const bed = setUp({
      policies: [gatePolicy({ serviceName: "web" })],
      pods: [aGatedPod("web-a", { gate: "True" })],
      builtInSlices: slices,
    });
    await bed.controller.policies.reconcile(KEY);
    expect((bed.writer.statuses.get(KEY)!.status as { serviceEndpoints?: object }).serviceEndpoints).toEqual({
      name: "web",
      ready: 1,
      total: 2,
    });
  });

  it("reports nothing of a Service when the policy names none", async () => {
    const bed = setUp({
      policies: [gatePolicy()],
      pods: [aGatedPod("web-a", { gate: "True" })],
      builtInSlices: [builtIn("web-v4", [["web-a", true]])],
    });
    await bed.controller.policies.reconcile(KEY);
    expect(bed.writer.statuses.get(KEY)!.status).not.toHaveProperty("serviceEndpoints");
  });
});
