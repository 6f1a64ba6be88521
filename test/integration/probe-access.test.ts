// What a policy may use: a Secret only when the Secret names the policy in its annotation
// healthprobe.io/allowed-policies, and a hostNetwork pod only when the pod opts in with
// healthprobe.io/probe-host-network=true. Checked on the pod servers: a refused value never arrives.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aService, endpointReadiness, podIP, type Obj, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "../support/pod-farm.js";
import { closeBed, openBed } from "./support/test-bed.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";

const HPP = "healthprobe.io/v1alpha1";
const TOKEN = "Bearer s3cret-value";

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

type Condition = { type: string; status: string; reason: string; message: string };

async function givenPod(pod: Obj): Promise<string> {
  await cluster.create(pod);
  const ip = await podIP(cluster, pod.metadata?.name as string);
  await farm.serve(ip);
  return ip;
}

async function readyCondition(reason: string): Promise<Condition> {
  return waitFor(async () => {
    const c = ((await cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.conditions as Condition[] | undefined)?.find((x) => x.type === "Ready");
    return c?.reason === reason ? c : undefined;
  }, { what: `Ready reason ${reason}` });
}

const secret = (annotations?: Record<string, string>): Obj => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "probe-auth", namespace: cluster.namespace, ...(annotations ? { annotations } : {}) },
  data: { token: Buffer.from(TOKEN).toString("base64") },
});

describe("Secrets opt in", () => {
  it("refuses a Secret without the annotation (SecretNotPermitted, a Warning naming the field and the fix), never sends its value, and uses it once the annotation names the policy", async () => {
    await cluster.create(secret({ "healthprobe.io/allowed-policies": "api" }));
    await cluster.create(aService("web", cluster.namespace));
    const ip = await givenPod(aPod("web-a", cluster.namespace));
    const headers = [{ name: "X-Env", value: "prod" }, { name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }];
    await cluster.create(aPolicy("web", cluster.namespace, { probe: { headers } }));
    operator = await startTestOperator(cluster.server);

    const ready = await readyCondition("SecretNotPermitted");
    expect(ready.status).toBe("False");
    expect(ready.message).toBe(
      'spec.probe.headers[1].valueFrom.secretKeyRef: Secret "probe-auth" does not allow policy "web" to use it; its owner can allow it: kubectl annotate secret probe-auth healthprobe.io/allowed-policies=web',
    );
    const warning = await waitFor(async () => (await cluster.list("events.k8s.io/v1", "Event")).find((e: Obj) => e.reason === "SecretNotPermitted"), { what: "a SecretNotPermitted Event" });
    expect(warning.type).toBe("Warning");
    expect(warning.note).toBe(ready.message);
    // Not probing: no veto and no verdict; the endpoints follow kubelet readiness.
    await waitFor(async () => (await endpointReadiness(cluster, "web")).get("web-a") === true, { what: "web-a listed ready as kubelet says" });
    expect(farm.hits.get(ip) ?? 0).toBe(0);

    await cluster.patch({ ...secret(), metadata: { name: "probe-auth", namespace: cluster.namespace, annotations: { "healthprobe.io/allowed-policies": "api, web" } } });
    expect(await readyCondition("Reconciled")).toMatchObject({ status: "True" });
    await waitFor(() => farm.headerValues.get(ip)?.has(TOKEN) === true, { what: "the Secret's value sent to web-a" });
  });

  it("never sends a refused Secret's value to a pod, probing or not, and no message carries it", async () => {
    await cluster.create(secret());
    await cluster.create(aService("web", cluster.namespace));
    const ip = await givenPod(aPod("web-a", cluster.namespace));
    await cluster.create(aPolicy("web", cluster.namespace, { probe: { headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }] } }));
    operator = await startTestOperator(cluster.server);
    await readyCondition("SecretNotPermitted");
    expect(farm.headerValues.get(ip)?.has(TOKEN) ?? false).toBe(false);
    expect(JSON.stringify(operator.logs)).not.toContain(TOKEN);
    expect(JSON.stringify((await cluster.get(HPP, "HealthProbePolicy", "web"))?.status)).not.toContain(TOKEN);
  });
});

describe("hostNetwork pods opt in", () => {
  it("does not probe a hostNetwork pod without the annotation, reports why in its entry and routes it as Unknown, and probes it once it opts in", async () => {
    await cluster.create(aService("web", cluster.namespace));
    const hostPod = aPod("web-host", cluster.namespace);
    hostPod.spec.hostNetwork = true;
    const hostIP = await givenPod(hostPod);
    const otherIP = await givenPod(aPod("web-b", cluster.namespace));
    await cluster.create(aPolicy("web", cluster.namespace));
    operator = await startTestOperator(cluster.server);

    const why = "hostNetwork pod (add annotation healthprobe.io/probe-host-network=true to probe it)";
    const ready = await readyCondition("Reconciled");
    expect(ready.message).toContain(`not probed: web-host (${why})`);
    const entry = await waitFor(async () => {
      const pods = (await cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.pods as Array<{ name: string; state: string; reason: string }> | undefined;
      return pods?.find((p) => p.name === "web-host");
    }, { what: "web-host's status entry" });
    expect(entry.state).toBe("Unknown");
    expect(entry.reason).toContain(why);
    await waitFor(() => (farm.hits.get(otherIP) ?? 0) > 0, { what: "web-b probed" });
    expect(farm.hits.get(hostIP) ?? 0).toBe(0);

    await cluster.patch({ apiVersion: "v1", kind: "Pod", metadata: { name: "web-host", namespace: cluster.namespace, annotations: { "healthprobe.io/probe-host-network": "true" } } });
    await waitFor(() => (farm.hits.get(hostIP) ?? 0) > 0, { what: "web-host probed once it opts in" });
  });
});
