// Drain method ReadinessGate on the API test server: an ordinary ReplicaSet whose pods carry the
// readiness gate healthprobe.io/ready, an ordinary Service with a selector, and a policy that
// drains by the pod condition. The kubelet stand-in folds the gate into each pod's Ready.
import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, endpointReadiness, type Obj, type PolicyOptions } from "./support/cluster.js";
import { conditionOf, livePods, policyStatus } from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

const GATE = "healthprobe.io/ready";
const bed = useBed();

const podCondition = (pod: Obj | undefined, type: string) =>
  (pod?.status?.conditions as Array<{ type: string; status: string; reason?: string }> | undefined)?.find(
    (c) => c.type === type,
  );

/** Each live pod's Ready as the kubelet stand-in folds the gate into it, by name. */
async function readyByName(app = "web"): Promise<Map<string, boolean>> {
  const pods = (await bed.cluster.list("v1", "Pod", bed.cluster.namespace, `app=${app}`)).filter(
    (p) => !p.metadata?.deletionTimestamp && p.status?.podIP,
  );
  return new Map(pods.map((p) => [p.metadata!.name!, podCondition(p, "Ready")?.status === "True"]));
}

async function readyCountIs(n: number, what: string, app = "web"): Promise<Map<string, boolean>> {
  return waitFor(
    async () => {
      const ready = await readyByName(app);
      return [...ready.values()].filter(Boolean).length === n ? ready : undefined;
    },
    { what },
  );
}

/** A gated ReplicaSet of `replicas` served pods behind a Service with a selector, a ReadinessGate policy, and the operator. */
async function givenGatedService(replicas: number, policy: PolicyOptions = {}): Promise<Obj[]> {
  await bed.cluster.create(aService("web", bed.cluster.namespace, { selector: { app: "web" } }));
  await bed.cluster.create(aReplicaSet("web", bed.cluster.namespace, replicas, { app: "web" }, { gated: true }));
  const pods = await livePods(bed, replicas);
  await bed.cluster.create(
    aPolicy("web", bed.cluster.namespace, { method: "ReadinessGate", failureThreshold: 2, ...policy }),
  );
  await bed.startOperator();
  await readyCountIs(replicas, "every pod admitted by the gate");
  return pods;
}

/** The Service's endpoints as the built-in EndpointSlice controller writes them: ready ones by pod name, once `n` are ready. */
async function readyEndpointsAre(n: number, what: string): Promise<Map<string, boolean>> {
  return waitFor(
    async () => {
      const slices = await bed.cluster.list(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        bed.cluster.namespace,
        "kubernetes.io/service-name=web,endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io",
      );
      const ready = await endpointReadiness(bed.cluster, "web");
      return slices.length > 0 && [...ready.values()].filter(Boolean).length === n ? ready : undefined;
    },
    { what },
  );
}

describe("drain method ReadinessGate (API test server)", () => {
  it("takes a failing pod out of the Service's EndpointSlices through its Ready and brings it back when it recovers", async () => {
    const pods = await givenGatedService(3);
    await readyEndpointsAre(3, "every endpoint ready in the built-in slices");
    const victim = pods[0]!;
    bed.farm.failing(victim.status.podIP);
    const ready = await readyCountIs(2, "the failing pod drained");
    expect(ready.get(victim.metadata!.name!)).toBe(false);
    expect((await readyEndpointsAre(2, "the drained pod's endpoint not ready")).get(victim.metadata!.name!)).toBe(
      false,
    );
    const drained = await bed.cluster.get("v1", "Pod", victim.metadata!.name!);
    expect(podCondition(drained, GATE)).toMatchObject({ status: "False", reason: "Unhealthy" });
    expect(podCondition(drained, "ContainersReady")?.status).toBe("True");
    await waitFor(async () => (await policyStatus(bed.cluster))?.drained === 1, {
      what: "status to count the drained pod",
    });
    const reported = await waitFor(
      async () => {
        const st = await policyStatus(bed.cluster);
        return st?.serviceEndpoints?.ready === 2 ? st.serviceEndpoints : undefined;
      },
      { what: "status to report the Service's two ready endpoints" },
    );
    expect(reported).toEqual({ name: "web", ready: 2, total: 3 });

    bed.farm.healthy(victim.status.podIP);
    await readyCountIs(3, "the recovered pod back");
    await readyEndpointsAre(3, "the recovered pod's endpoint ready again");
    expect(podCondition(await bed.cluster.get("v1", "Pod", victim.metadata!.name!), GATE)).toMatchObject({
      status: "True",
      reason: "Admitted",
    });
  }, 60_000);

  it("holds the cap, and fails open when every pod fails", async () => {
    const pods = await givenGatedService(4, { maxUnhealthyPercent: 50 });
    for (const p of pods.slice(0, 3)) bed.farm.failing(p.status.podIP);
    await waitFor(async () => conditionOf(await policyStatus(bed.cluster), "DrainCapped")?.status === "True", {
      what: "the cap to bite",
    });
    // Two of four drained, the third kept in by the cap, the healthy one in.
    expect([...(await readyByName()).values()].filter(Boolean)).toHaveLength(2);
    await readyEndpointsAre(2, "two ready endpoints in the built-in slices");

    bed.farm.failing(pods[3]!.status.podIP);
    await waitFor(async () => conditionOf(await policyStatus(bed.cluster), "FailOpen")?.status === "True", {
      what: "fail open",
    });
    await readyCountIs(4, "every pod back in while failing open");
    await readyEndpointsAre(4, "every endpoint ready while failing open");
  }, 60_000);

  it("a rollout waits: the new ReplicaSet's pods are not Ready until their first successful probe", async () => {
    await givenGatedService(2);
    // The new pods run, but nothing answers their probes yet: their container declares another port,
    // so the control plane's kubelet stand-in does not serve the probed one either.
    await bed.cluster.create(
      aReplicaSet("web-v2", bed.cluster.namespace, 2, { app: "web", rev: "2" }, { gated: true, port: 9090 }),
    );
    const fresh = await waitFor(
      async () => {
        const list = (await bed.cluster.list("v1", "Pod", bed.cluster.namespace, "rev=2")).filter(
          (p) => p.status?.podIP && podCondition(p, "ContainersReady")?.status === "True",
        );
        return list.length === 2 ? list : undefined;
      },
      { what: "the new pods running" },
    );
    // Held out: WarmingUp until failureThreshold failures, Unhealthy after (connection refused
    // counts); which one a poll sees depends on timing, so either is the held-out verdict.
    await waitFor(
      async () => {
        const list = await bed.cluster.list("v1", "Pod", bed.cluster.namespace, "rev=2");
        const heldOut = (p: Obj) =>
          podCondition(p, GATE)?.status === "False" &&
          ["WarmingUp", "Unhealthy"].includes(podCondition(p, GATE)?.reason ?? "");
        return list.length === 2 && list.every(heldOut) ? list : undefined;
      },
      { what: "the new pods held out by the gate" },
    );
    expect([...(await readyByName()).values()].filter(Boolean)).toHaveLength(2);

    for (const p of fresh) await bed.farm.serve(p.status.podIP);
    await readyCountIs(4, "the new pods admitted after their first success");
  }, 60_000);

  it.each([
    ["deleted", () => bed.cluster.remove("healthprobe.io/v1alpha1", "HealthProbePolicy", "web")],
    [
      "switched back to EndpointSlice",
      () =>
        bed.cluster.patch({ ...aPolicy("web", bed.cluster.namespace), spec: { drain: { method: "EndpointSlice" } } }),
    ],
  ])(
    "a policy %s leaves no pod out: the pods it kept out get True",
    async (_name, change) => {
      const pods = await givenGatedService(3);
      bed.farm.failing(pods[0]!.status.podIP);
      await readyCountIs(2, "the failing pod drained");
      await change();
      await readyCountIs(3, "every pod back in");
      expect(podCondition(await bed.cluster.get("v1", "Pod", pods[0]!.metadata!.name!), GATE)).toMatchObject({
        status: "True",
        reason: "NoPolicy",
      });
    },
    60_000,
  );

  it("a policy that cannot probe (its Secret gone) leaves no pod out: the pod it kept out gets True, NoPolicy", async () => {
    const token = Buffer.from("Bearer s3cret").toString("base64");
    await bed.cluster.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "probe-auth",
        namespace: bed.cluster.namespace,
        annotations: { "healthprobe.io/allowed-policies": "web" },
      },
      data: { token },
    });
    const pods = await givenGatedService(3, {
      probe: {
        headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }],
      },
    });
    bed.farm.failing(pods[0]!.status.podIP);
    await readyCountIs(2, "the failing pod drained");

    // The Secret goes while the operator is down; the one that starts cannot probe.
    await bed.stopOperator();
    await bed.cluster.remove("v1", "Secret", "probe-auth");
    await bed.startOperator();
    await waitFor(async () => conditionOf(await policyStatus(bed.cluster), "Ready")?.reason === "SecretNotFound", {
      what: "Ready=False, SecretNotFound",
    });
    await readyCountIs(3, "every pod back in");
    expect(podCondition(await bed.cluster.get("v1", "Pod", pods[0]!.metadata!.name!), GATE)).toMatchObject({
      status: "True",
      reason: "NoPolicy",
    });
  }, 60_000);

  it("a younger policy takes the pods over when the one holding them is deleted, and writes its own verdict", async () => {
    // The older policy drains a failing pod; the younger one allows no drain (3 pods at 25%).
    const pods = await givenGatedService(3);
    bed.farm.failing(pods[0]!.status.podIP);
    await readyCountIs(2, "the failing pod drained by the older policy");
    await bed.cluster.create(
      aPolicy("web-strict", bed.cluster.namespace, {
        method: "ReadinessGate",
        failureThreshold: 2,
        maxUnhealthyPercent: 25,
      }),
    );
    await waitFor(
      async () => {
        const st = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web-strict"))?.status;
        return (st?.unhealthy as number | undefined) === 1;
      },
      { what: "the younger policy to see the pod Unhealthy too" },
    );

    await bed.cluster.remove("healthprobe.io/v1alpha1", "HealthProbePolicy", "web");
    await readyCountIs(3, "the pod admitted by the younger policy's cap", "web");
    expect(podCondition(await bed.cluster.get("v1", "Pod", pods[0]!.metadata!.name!), GATE)).toMatchObject({
      status: "True",
      reason: "Admitted",
    });
  }, 60_000);
});
