import { describe, expect, it } from "@jest/globals";
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_OPERATOR } from "../domain/endpoint-slice-types.js";
import { FakeClock } from "../runtime/testing/fake-clock.js";
import { Endpoints } from "./endpoints.js";
import type { KubeObject, PolicyObject, ServiceObject } from "./kube-objects.js";
import { ServiceOwnership } from "./service-ownership.js";
import { ServiceSlices } from "./service-slices.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { MemoryWriter } from "./testing/memory-writer.js";
import { NS, aPolicyObject, aServiceObject } from "./testing/objects.js";
import { quietLogger } from "./testing/quiet-logger.js";

const aSlice = (name: string, service: string): KubeObject => ({
  metadata: { name, namespace: NS, labels: { [LABEL_MANAGED_BY]: MANAGED_BY_OPERATOR, [LABEL_SERVICE_NAME]: service } },
});

function setUp(policies: PolicyObject[], services: ServiceObject[], leader = true) {
  const writer = new MemoryWriter();
  const servicesCache = new MemoryCache(services);
  const endpoints = new Endpoints({
    slices: new MemoryCache([aSlice("web-1", "web"), aSlice("web-2", "web")]),
    nodes: new MemoryCache(),
    writer,
    clock: new FakeClock(),
  });
  const controller = new ServiceSlices({
    services: servicesCache,
    ownership: new ServiceOwnership(new MemoryCache(policies), servicesCache),
    endpoints,
    logger: quietLogger(),
    isLeader: () => leader,
  });
  return { controller, writer };
}

describe("the ServiceSlices controller", () => {
  it.each<{ name: string; policies: PolicyObject[]; services: ServiceObject[]; leader?: boolean; deleted: string[] }>([
    {
      name: "keeps the slices of a Service its policy manages",
      policies: [aPolicyObject()],
      services: [aServiceObject()],
      deleted: [],
    },
    {
      name: "removes the slices when no policy names the Service (deleted, or pointed elsewhere)",
      policies: [aPolicyObject("web", { serviceName: "api" })],
      services: [aServiceObject()],
      deleted: ["web-1", "web-2"],
    },
    {
      name: "removes the slices when the Service is gone",
      policies: [aPolicyObject()],
      services: [],
      deleted: ["web-1", "web-2"],
    },
    {
      name: "removes the slices when the Service gained a selector",
      policies: [aPolicyObject()],
      services: [aServiceObject("web", { selector: { app: "web" } })],
      deleted: ["web-1", "web-2"],
    },
    {
      name: "removes the slices when the only policy naming the Service is terminating",
      policies: [aPolicyObject("web", {}, { deletionTimestamp: "2026-01-01T00:00:00Z" })],
      services: [aServiceObject()],
      deleted: ["web-1", "web-2"],
    },
    { name: "a standby removes nothing", policies: [], services: [], leader: false, deleted: [] },
  ])("$name", async ({ policies, services, leader, deleted }) => {
    const { controller, writer } = setUp(policies, services, leader ?? true);
    await controller.reconcile(`${NS}/web`);
    expect(writer.calls).toEqual(deleted.map((n) => `delete ${n}`));
  });

  it("keys are Services, not policies: a policy named like another Service does not protect that Service's slices", async () => {
    const { controller, writer } = setUp([aPolicyObject("web", { serviceName: "api" })], [aServiceObject()]);
    await controller.reconcile(`${NS}/web`);
    expect(writer.calls).toEqual(["delete web-1", "delete web-2"]);
  });
});
