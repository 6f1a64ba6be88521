// What a policy may use: a Secret only when the Secret names the policy in its annotation
// healthprobe.io/allowed-policies, and a hostNetwork pod only when the pod opts in with
// healthprobe.io/probe-host-network=true. Checked on the pod servers: a refused value never arrives.
import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aService, endpointReadiness, type Obj } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";
import { servedPod, type PolicyCondition as Condition } from "./support/queries.js";

const HPP = "healthprobe.io/v1alpha1";
const TOKEN = "Bearer s3cret-value";

const bed = useBed();

const givenPod = (pod: Obj) => servedPod(bed, pod);

async function readyCondition(reason: string): Promise<Condition> {
  return waitFor(
    async () => {
      const c = (
        (await bed.cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.conditions as Condition[] | undefined
      )?.find((x) => x.type === "Ready");
      return c?.reason === reason ? c : undefined;
    },
    { what: `Ready reason ${reason}` },
  );
}

const secret = (annotations?: Record<string, string>): Obj => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "probe-auth", namespace: bed.cluster.namespace, ...(annotations ? { annotations } : {}) },
  data: { token: Buffer.from(TOKEN).toString("base64") },
});

describe("Secrets opt in", () => {
  it("refuses a Secret without the annotation (SecretNotPermitted, a Warning naming the field and the fix), never sends its value, and uses it once the annotation names the policy", async () => {
    await bed.cluster.create(secret({ "healthprobe.io/allowed-policies": "api" }));
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ip = await givenPod(aPod("web-a", bed.cluster.namespace));
    const headers = [
      { name: "X-Env", value: "prod" },
      { name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } },
    ];
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { probe: { headers } }));
    await bed.startOperator();

    const ready = await readyCondition("SecretNotPermitted");
    expect(ready.status).toBe("False");
    expect(ready.message).toBe(
      'spec.probe.headers[1].valueFrom.secretKeyRef: Secret "probe-auth" does not allow policy "web" to use it; its owner can allow it: kubectl annotate secret probe-auth healthprobe.io/allowed-policies=web',
    );
    const warning = await waitFor(
      async () =>
        (await bed.cluster.list("events.k8s.io/v1", "Event")).find((e: Obj) => e.reason === "SecretNotPermitted"),
      { what: "a SecretNotPermitted Event" },
    );
    expect(warning.type).toBe("Warning");
    expect(warning.note).toBe(ready.message);
    // Not probing: no veto and no verdict; the endpoints follow kubelet readiness.
    await waitFor(async () => (await endpointReadiness(bed.cluster, "web")).get("web-a") === true, {
      what: "web-a listed ready as kubelet says",
    });
    expect(await bed.farm.hitsOf(ip)).toBe(0);

    await bed.cluster.patch({
      ...secret(),
      metadata: {
        name: "probe-auth",
        namespace: bed.cluster.namespace,
        annotations: { "healthprobe.io/allowed-policies": "api, web" },
      },
    });
    expect(await readyCondition("Reconciled")).toMatchObject({ status: "True" });
    await waitFor(async () => await bed.farm.sawHeaderValue(ip, TOKEN), {
      what: "the Secret's value sent to web-a",
    });
  });

  it("never sends a refused Secret's value to a pod, probing or not, and no message carries it", async () => {
    await bed.cluster.create(secret());
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ip = await givenPod(aPod("web-a", bed.cluster.namespace));
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, {
        probe: {
          headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }],
        },
      }),
    );
    await bed.startOperator();
    await readyCondition("SecretNotPermitted");
    expect(await bed.farm.sawHeaderValue(ip, TOKEN)).toBe(false);
    expect(JSON.stringify(bed.operator.logs)).not.toContain(TOKEN);
    expect(JSON.stringify((await bed.cluster.get(HPP, "HealthProbePolicy", "web"))?.status)).not.toContain(TOKEN);
  });
});

describe("hostNetwork pods opt in", () => {
  it("does not probe a hostNetwork pod without the annotation, reports why in its entry and routes it as Unknown, and probes it once it opts in", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const hostPod = aPod("web-host", bed.cluster.namespace);
    hostPod.spec.hostNetwork = true;
    const hostIP = await givenPod(hostPod);
    const otherIP = await givenPod(aPod("web-b", bed.cluster.namespace));
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();

    const why = "hostNetwork pod (add annotation healthprobe.io/probe-host-network=true to probe it)";
    const ready = await readyCondition("Reconciled");
    expect(ready.message).toContain(`not probed: web-host (${why})`);
    const entry = await waitFor(
      async () => {
        const pods = (await bed.cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.pods as
          Array<{ name: string; state: string; reason: string }> | undefined;
        return pods?.find((p) => p.name === "web-host");
      },
      { what: "web-host's status entry" },
    );
    expect(entry.state).toBe("Unknown");
    expect(entry.reason).toContain(why);
    await waitFor(async () => (await bed.farm.hitsOf(otherIP)) > 0, { what: "web-b probed" });
    expect(await bed.farm.hitsOf(hostIP)).toBe(0);

    await bed.cluster.patch({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "web-host",
        namespace: bed.cluster.namespace,
        annotations: { "healthprobe.io/probe-host-network": "true" },
      },
    });
    await waitFor(async () => (await bed.farm.hitsOf(hostIP)) > 0, { what: "web-host probed once it opts in" });
  });
});
