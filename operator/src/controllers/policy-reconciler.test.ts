import { describe, expect, it } from "@jest/globals";
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_OPERATOR } from "../domain/endpoint-slice-types.js";
import type { MemoryWriter } from "./testing/memory-writer.js";
import { NS, aPodObject, aPolicyObject, aServiceObject } from "./testing/objects.js";
import { NOW, setUp } from "./testing/policy-controller-bed.js";

const sliceWrites = (w: MemoryWriter) => w.calls.filter((c) => /^(create|update|delete) /.test(c));
const statusOf = (w: MemoryWriter, key = `${NS}/web`) =>
  w.statuses.get(key)!.status as { conditions: Array<{ type: string; reason: string }>; targets: number };
const readyReason = (w: MemoryWriter, key?: string) =>
  statusOf(w, key).conditions.find((c) => c.type === "Ready")?.reason;

describe("the policy reconciler", () => {
  it.each([
    {
      name: "a valid policy over a selector-less Service probes its pods and writes slices and status",
      policies: undefined,
      services: undefined,
      reason: "Reconciled",
      probes: 1,
      slices: 1,
    },
    {
      name: "an invalid spec is InvalidSpec: nothing probed, no slice",
      policies: [aPolicyObject("web", { probe: { port: 0, path: "/" } })],
      services: undefined,
      reason: "InvalidSpec",
      probes: 0,
      slices: 0,
    },
    {
      name: "a missing Service is ServiceNotFound: nothing probed, no slice",
      policies: undefined,
      services: [],
      reason: "ServiceNotFound",
      probes: 0,
      slices: 0,
    },
    {
      name: "a Service with a selector is ServiceHasSelector: nothing probed, no slice",
      policies: undefined,
      services: [aServiceObject("web", { selector: { app: "web" } })],
      reason: "ServiceHasSelector",
      probes: 0,
      slices: 0,
    },
  ])("$name", async ({ policies, services, reason, probes, slices }) => {
    const { controller, writer, scheduled } = setUp({
      ...(policies ? { policies } : {}),
      ...(services ? { services } : {}),
    });
    await controller.policies.reconcile(`${NS}/web`);
    expect(readyReason(writer)).toBe(reason);
    expect(scheduled.get(`${NS}/web`) ?? []).toHaveLength(probes);
    expect(sliceWrites(writer)).toHaveLength(slices);
  });

  it("a Secret the API server refuses the operator is SecretForbidden for that policy only: no error, no probe, a Warning, and the other policy probes on", async () => {
    const headers = [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "auth", key: "token" } } }];
    const policies = [
      aPolicyObject("web", { probe: { port: 8080, path: "/healthz", headers } }),
      aPolicyObject("web-too", { serviceName: "api" }),
    ];
    const { controller, writer, scheduled, events } = setUp({
      policies,
      services: [aServiceObject("web"), aServiceObject("api")],
    });
    writer.forbiddenSecrets.add(`${NS}/auth`);
    await expect(controller.policies.reconcile(`${NS}/web`)).resolves.toEqual({ requeueAfterMs: 5_000 });
    await controller.policies.reconcile(`${NS}/web-too`);
    const ready = statusOf(writer).conditions.find((c) => c.type === "Ready") as
      { reason: string; message: string } | undefined;
    expect(ready?.reason).toBe("SecretForbidden");
    expect(ready?.message).toMatch(
      /^spec\.probe\.headers\[0\]\.valueFrom\.secretKeyRef: the API server refuses the operator Secret "auth" \(403 Forbidden: /,
    );
    expect(events.filter((e) => e.reason === "SecretForbidden").map((e) => e.type)).toEqual(["Warning"]);
    expect(scheduled.get(`${NS}/web`) ?? []).toHaveLength(0);
    expect(readyReason(writer, `${NS}/web-too`)).toBe("Reconciled");
    expect(scheduled.get(`${NS}/web-too`)).toHaveLength(1);
  });

  it.each([
    {
      name: "a timeoutSeconds over --max-probe-timeout keeps the policy Ready and says in Ready's message that it is capped",
      max: 30_000,
      message:
        "spec valid, Service found and selector-less, probing running; spec.probe.timeoutSeconds 60 capped to 30: the operator's --max-probe-timeout is 30s",
    },
    {
      name: "a timeoutSeconds within --max-probe-timeout says nothing of it",
      max: 60_000,
      message: "spec valid, Service found and selector-less, probing running",
    },
  ])("$name", async ({ max, message }) => {
    const { controller, writer } = setUp({ maxProbeTimeoutMs: max });
    await controller.policies.reconcile(`${NS}/web`);
    expect(statusOf(writer).conditions.find((c) => c.type === "Ready")).toMatchObject({
      reason: "Reconciled",
      message,
    });
  });

  it("a standby probes and evaluates but writes nothing", async () => {
    const { controller, writer, scheduled } = setUp({ leader: false });
    await controller.policies.reconcile(`${NS}/web`);
    expect(scheduled.get(`${NS}/web`)).toHaveLength(1);
    expect(writer.calls.filter((c) => !c.startsWith("secret"))).toEqual([]);
  });

  it("writes no slice while the slice cache has not caught up with its own last write, and looks again soon", async () => {
    const { controller, writer } = setUp();
    await controller.policies.reconcile(`${NS}/web`);
    const before = sliceWrites(writer).length;
    const result = await controller.policies.reconcile(`${NS}/web`);
    expect(sliceWrites(writer)).toHaveLength(before);
    expect(result).toEqual({ requeueAfterMs: expect.any(Number) });
  });

  it("keys policies and Services apart: the Service controller never takes a policy key for a Service", async () => {
    const { controller, writer, caches } = setUp({
      policies: [aPolicyObject("web", { serviceName: "api" })],
      services: [aServiceObject("api"), aServiceObject("web")],
    });
    caches.slices.put({
      metadata: {
        name: "web-1",
        namespace: NS,
        labels: { [LABEL_MANAGED_BY]: MANAGED_BY_OPERATOR, [LABEL_SERVICE_NAME]: "web" },
      },
    });
    await controller.serviceSlices.reconcile(`${NS}/web`);
    expect(writer.calls).toContain("delete web-1");
  });

  it.each([
    {
      name: "a dryRun policy says when it would replace an Unhealthy pod, and replaces nothing",
      dryRun: true,
      reason: /; would be replaced at 2026-01-01T12:30:00Z$/,
      evictions: 0,
    },
    {
      name: "an active policy shows when it will replace an Unhealthy pod",
      dryRun: false,
      reason: /^(?!.*would be replaced)/,
      evictions: 0,
    },
  ])("$name", async ({ dryRun, reason, evictions }) => {
    const spec = { dryRun, evaluation: { failureThreshold: 1 }, replacement: { enabled: true, after: "30m" } };
    const { controller, writer, health, clock } = setUp({
      pods: [aPodObject("web-a"), aPodObject("web-b")],
      policies: [aPolicyObject("web", spec)],
    });
    await controller.policies.reconcile(`${NS}/web`);
    health.record(`${NS}/web`, "uid-web-a", {
      success: false,
      failureKind: "http_status",
      failureClass: "HTTP 503",
      result: "HTTP 503 in 1 ms",
      latencyMs: 1,
      finishedAt: NOW,
    });
    health.record(`${NS}/web`, "uid-web-b", {
      success: true,
      failureClass: "HTTP 200",
      result: "HTTP 200 in 1 ms",
      latencyMs: 1,
      finishedAt: NOW,
    });
    clock.advance(2_000); // past the status write throttle
    await controller.policies.reconcile(`${NS}/web`);
    const pod = (
      writer.statuses.get(`${NS}/web`)!.status as {
        pods: Array<{ name: string; replaceAfter?: string; reason: string }>;
      }
    ).pods.find((p) => p.name === "web-a")!;
    expect(pod.replaceAfter).toBe("2026-01-01T12:30:00Z");
    expect(pod.reason).toMatch(reason);
    expect(writer.evictions).toHaveLength(evictions);
  });

  it("forgets a deleted policy: probing stops", async () => {
    const { controller, scheduled, caches } = setUp();
    await controller.policies.reconcile(`${NS}/web`);
    caches.policies.remove(NS, "web");
    await controller.policies.reconcile(`${NS}/web`);
    expect(scheduled.get(`${NS}/web`)).toEqual([]);
  });
});
