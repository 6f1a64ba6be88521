// Nothing is left frozen: the slices a policy wrote are removed once it no longer manages their
// Service (serviceName changed, Service deleted or given a selector), and a policy waiting for a
// claimed Service takes it over when the owner is deleted.
import { describe, expect, it } from "@jest/globals";
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from "../../operator/src/api/group.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, type Obj } from "./support/cluster.js";
import { servedPods } from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

const HPP = "healthprobe.io/v1alpha1";

const bed = useBed();

const operatorSlices = (service: string) =>
  bed.cluster.list(
    "discovery.k8s.io/v1",
    "EndpointSlice",
    bed.cluster.namespace,
    `kubernetes.io/service-name=${service},${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
  );
const podsIn = async (service: string) =>
  (await operatorSlices(service))
    .flatMap((s: Obj) => (s.endpoints ?? []).map((e: Obj) => e.targetRef.name as string))
    .sort();

async function readyReason(policy: string): Promise<string | undefined> {
  const st = (await bed.cluster.get(HPP, "HealthProbePolicy", policy))?.status;
  return (st?.conditions as Array<{ type: string; reason: string }> | undefined)?.find((c) => c.type === "Ready")
    ?.reason;
}

const givenServedPods = (names: string[], labels = { app: "web" }) => servedPods(bed, names, labels);

describe("slices of a Service a policy no longer manages", () => {
  it("are removed when the policy's serviceName changes, and the new Service gets the pods", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aService("web-v2", bed.cluster.namespace));
    await givenServedPods(["web-a", "web-b"]);
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();
    await waitFor(async () => (await podsIn("web")).length === 2, { what: "web's slices" });

    await bed.cluster.patch({
      apiVersion: HPP,
      kind: "HealthProbePolicy",
      metadata: { name: "web", namespace: bed.cluster.namespace },
      spec: { serviceName: "web-v2" },
    });
    await waitFor(async () => (await podsIn("web-v2")).join() === "web-a,web-b", { what: "web-v2's slices" });
    await waitFor(async () => (await operatorSlices("web")).length === 0, {
      what: "the old Service's slices to be removed",
    });
  });

  it("are removed when the Service gains a selector, so it never gets both sets", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await givenServedPods(["web-a"]);
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();
    await waitFor(async () => (await podsIn("web")).length === 1, { what: "web's slices" });

    await bed.cluster.patch({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: bed.cluster.namespace },
      spec: { selector: { app: "web" } },
    });
    await waitFor(async () => (await readyReason("web")) === "ServiceHasSelector", {
      what: "Ready reason ServiceHasSelector",
    });
    await waitFor(async () => (await operatorSlices("web")).length === 0, {
      what: "the policy's slices to be removed",
    });
  });

  it("are removed when the Service is deleted (ServiceNotFound)", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await givenServedPods(["web-a"]);
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();
    await waitFor(async () => (await podsIn("web")).length === 1, { what: "web's slices" });

    await bed.cluster.remove("v1", "Service", "web");
    await waitFor(async () => (await readyReason("web")) === "ServiceNotFound", {
      what: "Ready reason ServiceNotFound",
    });
    await waitFor(async () => (await operatorSlices("web")).length === 0, {
      what: "the policy's slices to be removed",
    });
  });
});

describe("a claimed Service", () => {
  it("is taken over by the waiting policy when its owner is deleted", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await givenServedPods(["web-a"]);
    await givenServedPods(["other-a"], { app: "other" });
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();
    await waitFor(async () => (await podsIn("web")).join() === "web-a", { what: "the first policy's slices" });
    await bed.cluster.create(aPolicy("web-too", bed.cluster.namespace, { selector: { app: "other" } }));
    await waitFor(async () => (await readyReason("web-too")) === "ServiceClaimed", { what: "web-too ServiceClaimed" });

    await bed.cluster.remove(HPP, "HealthProbePolicy", "web");
    await waitFor(async () => (await readyReason("web-too")) === "Reconciled", {
      what: "web-too to take the Service over",
    });
    await waitFor(async () => (await podsIn("web")).join() === "other-a", {
      what: "the Service listing web-too's pods only",
    });
    expect(await readyReason("web-too")).toBe("Reconciled");
  });

  it("is taken over by the waiting policy when its owner is pointed at another Service", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aService("api", bed.cluster.namespace));
    await givenServedPods(["web-a"]);
    await givenServedPods(["other-a"], { app: "other" });
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();
    await waitFor(async () => (await podsIn("web")).join() === "web-a", { what: "the first policy's slices" });
    await bed.cluster.create(aPolicy("web-too", bed.cluster.namespace, { selector: { app: "other" } }));
    await waitFor(async () => (await readyReason("web-too")) === "ServiceClaimed", { what: "web-too ServiceClaimed" });

    await bed.cluster.patch({
      apiVersion: HPP,
      kind: "HealthProbePolicy",
      metadata: { name: "web", namespace: bed.cluster.namespace },
      spec: { serviceName: "api" },
    });
    await waitFor(async () => (await readyReason("web-too")) === "Reconciled", {
      what: "web-too to take the Service over",
    });
    await waitFor(async () => (await podsIn("web")).join() === "other-a", {
      what: "the Service listing web-too's pods only",
    });
    await waitFor(async () => (await podsIn("api")).join() === "web-a", {
      what: "the moved policy's slices on its new Service",
    });
  });
});
