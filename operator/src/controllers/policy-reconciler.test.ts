import { describe, expect, it } from "@jest/globals";
import type { EventInput } from "../adapters/event-recorder.js";
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_OPERATOR } from "../domain/endpoint-slice-types.js";
import { HealthStore } from "../runtime/health-store.js";
import type { ProbeTarget } from "../runtime/probe-scheduler.js";
import { FakeClock } from "../runtime/testing/fake-clock.js";
import type { KubeObject, PodObject, PolicyObject, ServiceObject } from "./kube-objects.js";
import { buildPolicyController } from "./policy-controller.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { MemoryWriter } from "./testing/memory-writer.js";
import { NS, aPodObject, aPolicyObject, aServiceObject } from "./testing/objects.js";
import { quietLogger } from "./testing/quiet-logger.js";

const NOW = Date.UTC(2026, 0, 1, 12);

function setUp(opts: { policies?: PolicyObject[]; services?: ServiceObject[]; pods?: PodObject[]; replicaSets?: KubeObject[]; leader?: boolean } = {}) {
  const caches = {
    policies: new MemoryCache<PolicyObject>(opts.policies ?? [aPolicyObject()]),
    pods: new MemoryCache<PodObject>(opts.pods ?? [aPodObject("web-a")]),
    services: new MemoryCache<ServiceObject>(opts.services ?? [aServiceObject()]),
    nodes: new MemoryCache<KubeObject>(),
    slices: new MemoryCache<KubeObject>(),
    replicaSets: new MemoryCache<KubeObject>(opts.replicaSets ?? []),
  };
  const writer = new MemoryWriter();
  writer.seedPolicy(`${NS}/web`, "1");
  writer.seedPolicy(`${NS}/web-too`, "1");
  const scheduled = new Map<string, ProbeTarget[]>();
  const events: EventInput[] = [];
  const health = new HealthStore();
  const clock = new FakeClock(NOW);
  const controller = buildPolicyController({
    caches,
    writer,
    scheduler: { setTargets: (owner, targets) => void scheduled.set(owner, targets), probeNow: () => {} },
    health,
    events: { record: (e) => events.push(e) },
    clock,
    logger: quietLogger(),
    isLeader: () => opts.leader ?? true,
    maxReplacementsPer12h: 10,
    operatorNamespace: "ops",
  });
  return { controller, writer, scheduled, caches, events, health, clock };
}

const sliceWrites = (w: MemoryWriter) => w.calls.filter((c) => /^(create|update|delete) /.test(c));
const statusOf = (w: MemoryWriter, key = `${NS}/web`) => w.statuses.get(key)!.status as { conditions: Array<{ type: string; reason: string }>; targets: number };
const readyReason = (w: MemoryWriter, key?: string) => statusOf(w, key).conditions.find((c) => c.type === "Ready")?.reason;

describe("the policy reconciler", () => {
  it.each([
    { name: "a valid policy over a selector-less Service probes its pods and writes slices and status", policies: undefined, services: undefined, reason: "Reconciled", probes: 1, slices: 1 },
    { name: "an invalid spec is InvalidSpec: nothing probed, no slice", policies: [aPolicyObject("web", { probe: { port: 0, path: "/" } })], services: undefined, reason: "InvalidSpec", probes: 0, slices: 0 },
    { name: "a missing Service is ServiceNotFound: nothing probed, no slice", policies: undefined, services: [], reason: "ServiceNotFound", probes: 0, slices: 0 },
    { name: "a Service with a selector is ServiceHasSelector: nothing probed, no slice", policies: undefined, services: [aServiceObject("web", { selector: { app: "web" } })], reason: "ServiceHasSelector", probes: 0, slices: 0 },
  ])("$name", async ({ policies, services, reason, probes, slices }) => {
    const { controller, writer, scheduled } = setUp({ ...(policies ? { policies } : {}), ...(services ? { services } : {}) });
    await controller.policies.reconcile(`${NS}/web`);
    expect(readyReason(writer)).toBe(reason);
    expect(scheduled.get(`${NS}/web`) ?? []).toHaveLength(probes);
    expect(sliceWrites(writer)).toHaveLength(slices);
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
    const { controller, writer, caches } = setUp({ policies: [aPolicyObject("web", { serviceName: "api" })], services: [aServiceObject("api"), aServiceObject("web")] });
    caches.slices.put({ metadata: { name: "web-1", namespace: NS, labels: { [LABEL_MANAGED_BY]: MANAGED_BY_OPERATOR, [LABEL_SERVICE_NAME]: "web" } } });
    await controller.serviceSlices.reconcile(`${NS}/web`);
    expect(writer.calls).toContain("delete web-1");
  });

  it.each([
    { name: "a dryRun policy says when it would replace an Unhealthy pod, and replaces nothing", dryRun: true, reason: /; would be replaced at 2026-01-01T12:30:00Z$/, evictions: 0 },
    { name: "an active policy shows when it will replace an Unhealthy pod", dryRun: false, reason: /^(?!.*would be replaced)/, evictions: 0 },
  ])("$name", async ({ dryRun, reason, evictions }) => {
    const spec = { dryRun, evaluation: { failureThreshold: 1 }, replacement: { enabled: true, after: "30m" } };
    const { controller, writer, health, clock } = setUp({ pods: [aPodObject("web-a"), aPodObject("web-b")], policies: [aPolicyObject("web", spec)] });
    await controller.policies.reconcile(`${NS}/web`);
    health.record(`${NS}/web`, "uid-web-a", { success: false, failureKind: "http_status", failureClass: "HTTP 503", result: "HTTP 503 in 1 ms", latencyMs: 1, finishedAt: NOW });
    health.record(`${NS}/web`, "uid-web-b", { success: true, failureClass: "HTTP 200", result: "HTTP 200 in 1 ms", latencyMs: 1, finishedAt: NOW });
    clock.advance(2_000); // past the status write throttle
    await controller.policies.reconcile(`${NS}/web`);
    const pod = (writer.statuses.get(`${NS}/web`)!.status as { pods: Array<{ name: string; replaceAfter?: string; reason: string }> }).pods.find((p) => p.name === "web-a")!;
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
