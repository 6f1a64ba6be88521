// Policies the operator must not act on: it says why in Ready and writes no endpoints for them.
import { describe, expect, it } from "@jest/globals";
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from "../../operator/src/api/group.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness, type Obj } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";
import { servedPods, type PolicyCondition as Condition } from "./support/queries.js";

const bed = useBed();

async function readyCondition(policy: string, reason: string): Promise<Condition> {
  return waitFor(
    async () => {
      const st = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", policy))?.status;
      const c = (st?.conditions as Condition[] | undefined)?.find((x) => x.type === "Ready");
      return c?.reason === reason ? c : undefined;
    },
    { what: `${policy} Ready reason ${reason}` },
  );
}

const operatorSliceWrites = () =>
  bed.cluster.server.requestLog.filter(
    (e) => e.user === "operator" && e.resource === "endpointslices" && e.method !== "GET",
  );
const operatorSlices = (service: string) =>
  bed.cluster.list(
    "discovery.k8s.io/v1",
    "EndpointSlice",
    bed.cluster.namespace,
    `kubernetes.io/service-name=${service},${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
  );
const hitsOf = async (ips: Map<string, string>) => {
  let n = 0;
  for (const ip of ips.values()) n += await bed.farm.hitsOf(ip);
  return n;
};

describe("policies the operator does not act on", () => {
  it("leaves a Service with a selector to the built-in controller: ServiceHasSelector, nothing written", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace, { selector: { app: "web" } }));
    const ips = await servedPods(bed, ["web-a", "web-b"]);
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();

    const ready = await readyCondition("web", "ServiceHasSelector");
    expect(ready.status).toBe("False");
    expect(ready.message).toMatch(/Service web has a selector/);
    expect(operatorSliceWrites()).toEqual([]);
    // The only slices are the built-in controller's.
    expect(await operatorSlices("web")).toEqual([]);
    const slices = await bed.cluster.list("discovery.k8s.io/v1", "EndpointSlice");
    expect(slices.map((s) => s.metadata!.labels![MANAGED_BY_LABEL])).toEqual(
      slices.map(() => "endpointslice-controller.k8s.io"),
    );
    expect(await hitsOf(ips)).toBe(0);
  });

  it("reports a missing Service as ServiceNotFound, and takes the Service on once it exists", async () => {
    await servedPods(bed, ["web-a"]);
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();

    const ready = await readyCondition("web", "ServiceNotFound");
    expect(ready).toMatchObject({ status: "False", message: "Service web not found in namespace shop" });
    expect(operatorSliceWrites()).toEqual([]);

    await bed.cluster.create(aService("web", bed.cluster.namespace));
    expect(await readyCondition("web", "Reconciled")).toMatchObject({ status: "True" });
    await waitFor(async () => (await endpointReadiness(bed.cluster, "web")).get("web-a") === true, {
      what: "web-a ready in the slices",
    });
  });

  it("gives a second policy naming an already claimed Service ServiceClaimed, and only the first one's pods are listed", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await servedPods(bed, ["web-a", "web-b"]);
    const others = await servedPods(bed, ["other-a"], { app: "other" });
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();
    await readyCondition("web", "Reconciled");

    await bed.cluster.create(aPolicy("web-too", bed.cluster.namespace, { selector: { app: "other" } }));
    const claimed = await readyCondition("web-too", "ServiceClaimed");
    expect(claimed).toMatchObject({
      status: "False",
      message: "Service web is already managed by HealthProbePolicy web",
    });

    const slices = await operatorSlices("web");
    expect(slices.flatMap((s: Obj) => (s.endpoints ?? []).map((e: Obj) => e.targetRef.name)).sort()).toEqual([
      "web-a",
      "web-b",
    ]);
    expect(await hitsOf(others)).toBe(0);
    // The first policy is untouched by the claim.
    expect(await readyCondition("web", "Reconciled")).toMatchObject({ status: "True" });
  });

  it("marks a policy whose header Secret is missing SecretNotFound (not InvalidSpec, no Warning), naming the field, probes nothing, lists the pods as kubelet says, and recovers once the Secret exists", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ips = await servedPods(bed, ["web-a"]);
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, {
        probe: {
          headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }],
        },
      }),
    );
    await bed.startOperator();

    const ready = await readyCondition("web", "SecretNotFound");
    expect(ready.status).toBe("False");
    expect(ready.message).toBe(
      'spec.probe.headers[0].valueFrom.secretKeyRef: key "token" of Secret "probe-auth" not found',
    );
    // Not dark for want of a Secret: the endpoints follow kubelet readiness until the policy probes.
    await waitFor(async () => (await endpointReadiness(bed.cluster, "web")).get("web-a") === true, {
      what: "web-a listed ready as kubelet says",
    });
    expect(await hitsOf(ips)).toBe(0);

    await bed.cluster.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "probe-auth",
        namespace: bed.cluster.namespace,
        annotations: { "healthprobe.io/allowed-policies": "web" },
      },
      data: { token: Buffer.from("Bearer s3cret").toString("base64") },
    });
    expect(await readyCondition("web", "Reconciled")).toMatchObject({ status: "True" });
    await waitFor(async () => (await endpointReadiness(bed.cluster, "web")).get("web-a") === true, {
      what: "web-a ready in the slices",
      timeoutMs: 15_000,
    });
    // The spec was valid all along: no InvalidSpec Warning was raised for it.
    expect(
      (await bed.cluster.list("events.k8s.io/v1", "Event")).filter((e: Obj) => e.reason === "InvalidSpec"),
    ).toEqual([]);
  });

  it("lets go of the Service when its Secret is gone: a pod it drained is listed again as kubelet says, not frozen out", async () => {
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "probe-auth",
        namespace: bed.cluster.namespace,
        annotations: { "healthprobe.io/allowed-policies": "web" },
      },
      data: { token: Buffer.from("Bearer s3cret").toString("base64") },
    };
    await bed.cluster.create(secret);
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ips = await servedPods(bed, ["web-a", "web-b"]);
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, {
        failureThreshold: 1,
        probe: {
          headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }],
        },
      }),
    );
    await bed.startOperator();
    bed.farm.failing(ips.get("web-a")!);
    await waitFor(async () => (await endpointReadiness(bed.cluster, "web")).get("web-a") === false, {
      what: "web-a drained",
    });

    // The Secret goes while the operator is down; the one that starts cannot probe.
    await bed.stopOperator();
    await bed.cluster.remove("v1", "Secret", "probe-auth");
    await bed.startOperator();
    await readyCondition("web", "SecretNotFound");
    const readiness = await waitFor(
      async () => {
        const r = await endpointReadiness(bed.cluster, "web");
        return r.get("web-a") === true && r.get("web-b") === true ? r : undefined;
      },
      { what: "both pods listed ready as kubelet says" },
    );
    expect(readiness.size).toBe(2);
  });
});
