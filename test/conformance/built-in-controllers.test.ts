// The built-in EndpointSlice controller and the kubelet's Ready rule with readiness gates, on the API
// test server (its controllers and kubelet stand-in) and, with HEALTHPROBE_TEST_CLUSTER=real, on the
// real control plane (kube-controller-manager's controller, the kubelet stand-in there): what a
// controller that drains through a pod condition relies on must hold the same on both.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import {
  CoreV1Api,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1EndpointSlice,
  type V1Pod,
  type V1PodCondition,
} from "@kubernetes/client-node";
import { kubeConfigFor } from "../../hack/apiserver/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { startConformanceCluster, type ConformanceCluster } from "./clusters.js";
import { uniqueName } from "./fixtures.js";

const GATE = "example.com/lb";
const BUILT_IN = "endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io";
const asStrategicMergePatch = setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch);

let cluster: ConformanceCluster;
let core: CoreV1Api;
let discovery: DiscoveryV1Api;

beforeAll(async () => {
  cluster = await startConformanceCluster({ simulateKubelet: true, bookmarkIntervalMs: 60_000 });
  const kc = kubeConfigFor(cluster, "client-node-user");
  core = kc.makeApiClient(CoreV1Api);
  discovery = kc.makeApiClient(DiscoveryV1Api);
}, 180_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

async function freshNamespace(): Promise<string> {
  const name = uniqueName("ns");
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

function aPod(name: string, opts: { gate?: boolean; finalizers?: string[] } = {}): V1Pod {
  return {
    metadata: { name, labels: { app: "web" }, ...(opts.finalizers ? { finalizers: opts.finalizers } : {}) },
    spec: {
      containers: [{ name: "app", image: "nginx:1.27", ports: [{ name: "http", containerPort: 8080 }] }],
      ...(opts.gate ? { readinessGates: [{ conditionType: GATE }] } : {}),
    },
  };
}

/** Creates a pod, waiting out the real server's refusal while the namespace's ServiceAccount is being made. */
async function createPod(namespace: string, pod: V1Pod): Promise<void> {
  await waitFor(
    () =>
      core.createNamespacedPod({ namespace, body: pod }).then(
        () => true,
        (err: { code?: number; body?: unknown }) => {
          if (err.code === 403 && String(err.body).includes("serviceaccount")) return false;
          throw err;
        },
      ),
    { what: `pod ${pod.metadata!.name} created` },
  );
}

async function createService(namespace: string): Promise<string> {
  const svc = await core.createNamespacedService({
    namespace,
    body: {
      metadata: { name: "web" },
      spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
    },
  });
  return svc.metadata!.uid!;
}

async function builtInSlices(namespace: string): Promise<V1EndpointSlice[]> {
  return (
    await discovery.listNamespacedEndpointSlice({
      namespace,
      labelSelector: `kubernetes.io/service-name=web,${BUILT_IN}`,
    })
  ).items;
}

/** "ready serving terminating" of each pod's endpoint in the Service's built-in slices, by pod name. */
async function endpointStates(namespace: string): Promise<Record<string, string>> {
  const out: Array<[string, string]> = [];
  for (const slice of await builtInSlices(namespace)) {
    for (const e of slice.endpoints ?? [])
      out.push([e.targetRef!.name!, `${e.conditions?.ready} ${e.conditions?.serving} ${e.conditions?.terminating}`]);
  }
  return Object.fromEntries(out.sort(([a], [b]) => a.localeCompare(b)));
}

async function endpointsBecome(namespace: string, want: Record<string, string>, what: string): Promise<void> {
  await waitFor(async () => JSON.stringify(await endpointStates(namespace)) === JSON.stringify(want), {
    what,
    timeoutMs: 60_000,
  });
}

const condition = (pod: V1Pod, type: string): V1PodCondition | undefined =>
  pod.status?.conditions?.find((c) => c.type === type);

async function podWhen(namespace: string, name: string, test: (pod: V1Pod) => boolean, what: string): Promise<V1Pod> {
  return waitFor(
    async () => {
      const pod = await core.readNamespacedPod({ name, namespace });
      return test(pod) ? pod : undefined;
    },
    { what, timeoutMs: 60_000 },
  );
}

async function setGate(namespace: string, name: string, status: "True" | "False"): Promise<void> {
  const gate = {
    type: GATE,
    status,
    reason: status === "True" ? "Admitted" : "KeptOut",
    message: "set by the test",
    lastTransitionTime: new Date(),
  };
  await core.patchNamespacedPodStatus(
    { name, namespace, body: { status: { conditions: [gate] } } },
    asStrategicMergePatch,
  );
}

describe("built-in controllers", () => {
  it("gives a Service with a selector slices from the EndpointSlice controller: labels, owner, resolved port, endpoint conditions", async () => {
    const ns = await freshNamespace();
    const uid = await createService(ns);
    await createPod(ns, aPod("a"));
    await createPod(ns, aPod("held", { finalizers: ["example.com/hold"] }));
    await endpointsBecome(
      ns,
      { a: "true true false", held: "true true false" },
      "both pods ready in the built-in slices",
    );

    const [slice, ...others] = await builtInSlices(ns);
    expect(others).toEqual([]);
    expect(slice!.metadata!.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(slice!.metadata!.labels).toEqual({
      "kubernetes.io/service-name": "web",
      "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    });
    // The trigger-time annotation is kube-controller-manager's alone: the test server's stand-in leaves it out.
    if (cluster.kind === "control-plane")
      expect(slice!.metadata!.annotations?.["endpoints.kubernetes.io/last-change-trigger-time"]).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
      );
    expect(slice!.metadata!.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "Service", name: "web", uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(slice!.addressType).toBe("IPv4");
    expect(slice!.ports).toEqual([{ name: "http", port: 8080, protocol: "TCP" }]);
    const pod = await core.readNamespacedPod({ name: "a", namespace: ns });
    expect(slice!.endpoints!.find((e) => e.targetRef?.name === "a")).toMatchObject({
      addresses: [pod.status!.podIP],
      targetRef: { kind: "Pod", namespace: ns, name: "a", uid: pod.metadata!.uid },
    });

    // Terminating (the finalizer holds it after the kubelet's zero-grace delete): serving, not ready.
    await core.deleteNamespacedPod({ name: "held", namespace: ns });
    await endpointsBecome(
      ns,
      { a: "true true false", held: "false true true" },
      "the terminating pod serving but not ready",
    );
    await core.patchNamespacedPod(
      { name: "held", namespace: ns, body: { metadata: { finalizers: null } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await endpointsBecome(ns, { a: "true true false" }, "the deleted pod gone from the slices");
  }, 120_000);

  it("keeps a pod with a readiness gate not Ready until the gate is patched True through pods/status, and its endpoint follows", async () => {
    const ns = await freshNamespace();
    await createService(ns);
    await createPod(ns, aPod("gated", { gate: true }));
    const started = await podWhen(
      ns,
      "gated",
      (p) => Boolean(p.status?.podIP) && condition(p, "ContainersReady")?.status === "True",
      "the gated pod running",
    );
    expect(condition(started, "Ready")).toMatchObject({
      status: "False",
      reason: "ReadinessGatesNotReady",
      message: `corresponding condition of pod readiness gate "${GATE}" does not exist.`,
    });
    await endpointsBecome(ns, { gated: "false false false" }, "the gated pod listed not ready");

    await setGate(ns, "gated", "True");
    const admitted = await podWhen(
      ns,
      "gated",
      (p) => condition(p, "Ready")?.status === "True",
      "Ready once the gate is True",
    );
    expect(condition(admitted, "Ready")?.reason ?? "").toBe("");
    expect(condition(admitted, GATE)).toMatchObject({ status: "True", reason: "Admitted", message: "set by the test" });
    await endpointsBecome(ns, { gated: "true true false" }, "the endpoint ready once the gate is True");

    await setGate(ns, "gated", "False");
    const keptOut = await podWhen(
      ns,
      "gated",
      (p) => condition(p, "Ready")?.status === "False",
      "not Ready once the gate is False",
    );
    expect(condition(keptOut, "Ready")).toMatchObject({
      reason: "ReadinessGatesNotReady",
      message: `the status of pod readiness gate "${GATE}" is not "True", but False`,
    });
    expect(condition(keptOut, GATE)).toMatchObject({ status: "False", reason: "KeptOut" });
    expect(condition(keptOut, "ContainersReady")?.status).toBe("True");
    await endpointsBecome(ns, { gated: "false false false" }, "the endpoint not ready once the gate is False");
  }, 120_000);
});
