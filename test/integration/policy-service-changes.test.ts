// Nothing is left frozen: the slices a policy wrote are removed once it no longer manages their
// Service (serviceName changed, Service deleted or given a selector), and a policy waiting for a
// claimed Service takes it over when the owner is deleted.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from "../../operator/src/api/group.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, type Obj, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "../support/pod-farm.js";
import { servedPods } from "./support/queries.js";
import { closeBed, openBed } from "./support/test-bed.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";

const HPP = "healthprobe.io/v1alpha1";

let cluster: TestCluster;
let farm: PodFarm;
let operator: TestOperator | undefined;

beforeEach(async () => {
  ({ cluster, farm } = await openBed());
});

afterEach(async () => {
  await closeBed({ cluster, farm }, [operator]);
  operator = undefined;
});

const operatorSlices = (service: string) =>
  cluster.list("discovery.k8s.io/v1", "EndpointSlice", cluster.namespace, `kubernetes.io/service-name=${service},${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`);
const podsIn = async (service: string) => (await operatorSlices(service)).flatMap((s: Obj) => (s.endpoints ?? []).map((e: Obj) => e.targetRef.name as string)).sort();

async function readyReason(policy: string): Promise<string | undefined> {
  const st = (await cluster.get(HPP, "HealthProbePolicy", policy))?.status;
  return (st?.conditions as Array<{ type: string; reason: string }> | undefined)?.find((c) => c.type === "Ready")?.reason;
}

const givenServedPods = (names: string[], labels = { app: "web" }) => servedPods(cluster, farm, names, labels);

describe("slices of a Service a policy no longer manages", () => {
  it("are removed when the policy's serviceName changes, and the new Service gets the pods", async () => {
    await cluster.create(aService("web", cluster.namespace));
    await cluster.create(aService("web-v2", cluster.namespace));
    await givenServedPods(["web-a", "web-b"]);
    await cluster.create(aPolicy("web", cluster.namespace));
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await podsIn("web")).length === 2, { what: "web's slices" });

    await cluster.patch({ apiVersion: HPP, kind: "HealthProbePolicy", metadata: { name: "web", namespace: cluster.namespace }, spec: { serviceName: "web-v2" } });
    await waitFor(async () => (await podsIn("web-v2")).join() === "web-a,web-b", { what: "web-v2's slices" });
    await waitFor(async () => (await operatorSlices("web")).length === 0, { what: "the old Service's slices to be removed" });
  });

  it("are removed when the Service gains a selector, so it never gets both sets", async () => {
    await cluster.create(aService("web", cluster.namespace));
    await givenServedPods(["web-a"]);
    await cluster.create(aPolicy("web", cluster.namespace));
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await podsIn("web")).length === 1, { what: "web's slices" });

    await cluster.patch({ apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: cluster.namespace }, spec: { selector: { app: "web" } } });
    await waitFor(async () => (await readyReason("web")) === "ServiceHasSelector", { what: "Ready reason ServiceHasSelector" });
    await waitFor(async () => (await operatorSlices("web")).length === 0, { what: "the policy's slices to be removed" });
  });

  it("are removed when the Service is deleted (ServiceNotFound)", async () => {
    await cluster.create(aService("web", cluster.namespace));
    await givenServedPods(["web-a"]);
    await cluster.create(aPolicy("web", cluster.namespace));
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await podsIn("web")).length === 1, { what: "web's slices" });

    await cluster.remove("v1", "Service", "web");
    await waitFor(async () => (await readyReason("web")) === "ServiceNotFound", { what: "Ready reason ServiceNotFound" });
    await waitFor(async () => (await operatorSlices("web")).length === 0, { what: "the policy's slices to be removed" });
  });
});

describe("a claimed Service", () => {
  it("is taken over by the waiting policy when its owner is deleted", async () => {
    await cluster.create(aService("web", cluster.namespace));
    await givenServedPods(["web-a"]);
    await givenServedPods(["other-a"], { app: "other" });
    await cluster.create(aPolicy("web", cluster.namespace));
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await podsIn("web")).join() === "web-a", { what: "the first policy's slices" });
    await cluster.create(aPolicy("web-too", cluster.namespace, { selector: { app: "other" } }));
    await waitFor(async () => (await readyReason("web-too")) === "ServiceClaimed", { what: "web-too ServiceClaimed" });

    await cluster.remove(HPP, "HealthProbePolicy", "web");
    await waitFor(async () => (await readyReason("web-too")) === "Reconciled", { what: "web-too to take the Service over" });
    await waitFor(async () => (await podsIn("web")).join() === "other-a", { what: "the Service listing web-too's pods only" });
    expect(await readyReason("web-too")).toBe("Reconciled");
  });

  it("is taken over by the waiting policy when its owner is pointed at another Service", async () => {
    await cluster.create(aService("web", cluster.namespace));
    await cluster.create(aService("api", cluster.namespace));
    await givenServedPods(["web-a"]);
    await givenServedPods(["other-a"], { app: "other" });
    await cluster.create(aPolicy("web", cluster.namespace));
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await podsIn("web")).join() === "web-a", { what: "the first policy's slices" });
    await cluster.create(aPolicy("web-too", cluster.namespace, { selector: { app: "other" } }));
    await waitFor(async () => (await readyReason("web-too")) === "ServiceClaimed", { what: "web-too ServiceClaimed" });

    await cluster.patch({ apiVersion: HPP, kind: "HealthProbePolicy", metadata: { name: "web", namespace: cluster.namespace }, spec: { serviceName: "api" } });
    await waitFor(async () => (await readyReason("web-too")) === "Reconciled", { what: "web-too to take the Service over" });
    await waitFor(async () => (await podsIn("web")).join() === "other-a", { what: "the Service listing web-too's pods only" });
    await waitFor(async () => (await podsIn("api")).join() === "web-a", { what: "the moved policy's slices on its new Service" });
  });
});
