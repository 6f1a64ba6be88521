import { describe, expect, it } from "@jest/globals";
import type { PolicyObject, ServiceObject } from "./kube-objects.js";
import { ServiceOwnership } from "./service-ownership.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { NS, aPolicyObject, aServiceObject } from "./testing/objects.js";

const older = { creationTimestamp: "2025-12-31T00:00:00Z" };

describe("which policy owns a Service", () => {
  it.each<{
    name: string;
    policies: PolicyObject[];
    services: ServiceObject[];
    asking: string;
    reason: string | undefined;
  }>([
    {
      name: "the only policy naming a selector-less Service may write it",
      policies: [aPolicyObject("web")],
      services: [aServiceObject()],
      asking: "web",
      reason: undefined,
    },
    {
      name: "a missing Service is ServiceNotFound",
      policies: [aPolicyObject("web")],
      services: [],
      asking: "web",
      reason: "ServiceNotFound",
    },
    {
      name: "a Service with a selector is ServiceHasSelector",
      policies: [aPolicyObject("web")],
      services: [aServiceObject("web", { selector: { app: "web" } })],
      asking: "web",
      reason: "ServiceHasSelector",
    },
    {
      name: "the younger of two policies is ServiceClaimed",
      policies: [aPolicyObject("a", {}, older), aPolicyObject("b")],
      services: [aServiceObject()],
      asking: "b",
      reason: "ServiceClaimed",
    },
    {
      name: "the older of two policies owns it",
      policies: [aPolicyObject("a", {}, older), aPolicyObject("b")],
      services: [aServiceObject()],
      asking: "a",
      reason: undefined,
    },
    {
      name: "equal ages: the first by name owns it",
      policies: [aPolicyObject("b"), aPolicyObject("a")],
      services: [aServiceObject()],
      asking: "b",
      reason: "ServiceClaimed",
    },
    {
      name: "a terminating older policy owns nothing",
      policies: [aPolicyObject("a", {}, { ...older, deletionTimestamp: "2026-01-01T00:00:00Z" }), aPolicyObject("b")],
      services: [aServiceObject()],
      asking: "b",
      reason: undefined,
    },
    {
      name: "an older ReadinessGate policy naming the Service only reports on it: it claims nothing",
      policies: [aPolicyObject("a", { drain: { method: "ReadinessGate" } }, older), aPolicyObject("b")],
      services: [aServiceObject()],
      asking: "b",
      reason: undefined,
    },
    {
      name: "a policy naming another Service does not claim this one",
      policies: [aPolicyObject("a", { serviceName: "api" }, older), aPolicyObject("b")],
      services: [aServiceObject()],
      asking: "b",
      reason: undefined,
    },
  ])("$name", ({ policies, services, asking, reason }) => {
    const ownership = new ServiceOwnership(new MemoryCache(policies), new MemoryCache(services));
    expect(ownership.problemFor(NS, asking, "web")?.reason).toBe(reason);
  });

  it("names the owner in the ServiceClaimed message", () => {
    const ownership = new ServiceOwnership(
      new MemoryCache([aPolicyObject("a", {}, older), aPolicyObject("b")]),
      new MemoryCache([aServiceObject()]),
    );
    expect(ownership.problemFor(NS, "b", "web")?.message).toBe("Service web is already managed by HealthProbePolicy a");
    expect(ownership.ownerOf(NS, "web")).toBe("a");
  });
});
