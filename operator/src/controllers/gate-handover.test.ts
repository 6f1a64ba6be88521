import { describe, expect, it } from "@jest/globals";
import type { PolicyObject } from "./kube-objects.js";
import { watchForGateHandover } from "./policy-controller.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { aPolicyObject } from "./testing/objects.js";

const gated = (name: string, over: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
  aPolicyObject(
    name,
    { drain: { method: "ReadinessGate" }, ...over },
    { creationTimestamp: name === "old" ? "2026-01-01T00:00:00Z" : "2026-01-02T00:00:00Z", ...meta },
  );
const secretNotFound = {
  conditions: [
    {
      type: "Ready",
      status: "False",
      reason: "SecretNotFound",
      message: "",
      lastTransitionTime: "2026-01-02T00:00:00Z",
    },
  ],
};

function setUp() {
  const policies = new MemoryCache<PolicyObject>();
  const queued: string[] = [];
  watchForGateHandover(policies, { add: (k) => void queued.push(k) });
  policies.put(gated("old"));
  policies.put(gated("young"));
  policies.put(aPolicyObject("slices"));
  queued.length = 0;
  return { policies, queued };
}

describe("the hand-over of gated pods between ReadinessGate policies", () => {
  it.each([
    { name: "the holding policy deleted", change: (p: MemoryCache<PolicyObject>) => p.remove("shop", "old") },
    {
      name: "switched to EndpointSlice",
      change: (p: MemoryCache<PolicyObject>) =>
        p.put(aPolicyObject("old", {}, { creationTimestamp: "2026-01-01T00:00:00Z" })),
    },
    { name: "set to dryRun", change: (p: MemoryCache<PolicyObject>) => p.put(gated("old", { dryRun: true })) },
    {
      name: "unable to probe (SecretNotFound)",
      change: (p: MemoryCache<PolicyObject>) => p.put({ ...gated("old"), status: secretNotFound }),
    },
    {
      name: "given another selector",
      change: (p: MemoryCache<PolicyObject>) => p.put(gated("old", { selector: { matchLabels: { app: "api" } } })),
    },
  ])(
    "wakes the other ReadinessGate policies of the namespace when one stops or changes holding: $name",
    ({ change }) => {
      const { policies, queued } = setUp();
      change(policies);
      expect(queued).toEqual(["shop/young"]);
    },
  );

  it("wakes nobody on a change that does not move any pod, such as a status write", () => {
    const { policies, queued } = setUp();
    policies.put({ ...gated("old"), status: { targets: 3 } });
    policies.put(gated("old", { probe: { port: 8080, path: "/ready" } }));
    expect(queued).toEqual([]);
  });
});
