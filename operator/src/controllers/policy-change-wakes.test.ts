import { describe, expect, it } from "@jest/globals";
import type { Caches } from "./caches.js";
import type { KubeObject, PodObject, PolicyObject, ServiceObject } from "./kube-objects.js";
import { watchForGateRelease, watchForServiceSlices, type PolicyController } from "./policy-controller.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { aPolicyObject } from "./testing/objects.js";

type Change = (policies: MemoryCache<PolicyObject>) => void;

/** The Service-slices and gate-release wiring over in-memory caches, with one policy of each drain method already seen. */
function setUp() {
  const policies = new MemoryCache<PolicyObject>();
  const caches = {
    policies,
    pods: new MemoryCache<PodObject>(),
    slices: new MemoryCache<KubeObject>(),
    services: new MemoryCache<ServiceObject>(),
  } as unknown as Caches;
  const controller = {
    endpoints: { managedServices: () => [{ namespace: "shop", service: "web" }] },
  } as unknown as PolicyController;
  const services: string[] = [];
  const namespaces: string[] = [];
  watchForServiceSlices(caches, controller, { add: (k) => void services.push(k) });
  watchForGateRelease(caches, { add: (k) => void namespaces.push(k) });
  policies.put(aPolicyObject("web"));
  policies.put(aPolicyObject("gated", { serviceName: "api", drain: { method: "ReadinessGate" } }));
  services.length = 0;
  namespaces.length = 0;
  return { policies, services, namespaces };
}

const statusWrite: Change = (p) => {
  p.put({ ...aPolicyObject("web"), status: { targets: 3, healthy: 3 } });
  p.put({
    ...aPolicyObject("gated", { serviceName: "api", drain: { method: "ReadinessGate" } }),
    status: { targets: 3, healthy: 2 },
  });
};

describe("which policy changes wake the Service-slices and gate-release controllers", () => {
  it("a status write wakes neither: with 500 policies each write would wake every Service of the namespace", () => {
    const { policies, services, namespaces } = setUp();
    statusWrite(policies);
    expect(services).toEqual([]);
    expect(namespaces).toEqual([]);
  });

  it.each<{ name: string; change: Change }>([
    { name: "the policy deleted", change: (p) => p.remove("shop", "web") },
    { name: "naming another Service", change: (p) => p.put(aPolicyObject("web", { serviceName: "shop-2" })) },
    {
      name: "switched to ReadinessGate",
      change: (p) => p.put(aPolicyObject("web", { drain: { method: "ReadinessGate" } })),
    },
    {
      name: "being deleted",
      change: (p) => p.put(aPolicyObject("web", {}, { deletionTimestamp: "2026-01-02T00:00:00Z" })),
    },
    { name: "a new policy", change: (p) => p.put(aPolicyObject("web-2")) },
  ])("a change of what owns a Service wakes the managed Services: $name", ({ change }) => {
    const { policies, services } = setUp();
    change(policies);
    expect(services).toEqual(["shop/web"]);
  });

  it.each<{ name: string; change: Change }>([
    { name: "the gate policy deleted", change: (p) => p.remove("shop", "gated") },
    {
      name: "set to dryRun",
      change: (p) =>
        p.put(aPolicyObject("gated", { serviceName: "api", drain: { method: "ReadinessGate" }, dryRun: true })),
    },
    {
      name: "given another selector",
      change: (p) =>
        p.put(
          aPolicyObject("gated", {
            serviceName: "api",
            drain: { method: "ReadinessGate" },
            selector: { matchLabels: { app: "api" } },
          }),
        ),
    },
  ])("a change of which pods a policy holds wakes the namespace's gate release: $name", ({ change }) => {
    const { policies, namespaces } = setUp();
    change(policies);
    expect(namespaces).toEqual(["shop"]);
  });
});
