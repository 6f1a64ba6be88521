// Drain method ReadinessGate end to end, through a kubeconfig only: an ordinary Service with a
// selector, a ReplicaSet whose pods carry the readiness gate healthprobe.io/ready, and a policy
// that drains by the pod condition. The EndpointSlices here are the built-in controller's (the
// real kube-controller-manager's on the real control plane): the pod leaves them and returns.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CoreV1Api, DiscoveryV1Api, KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import {
  BACKEND_PORT,
  HEALTH_PATH,
  ensureCrd,
  kubectl,
  settleMs,
  startEnvironment,
  startMs,
  waitExplained,
  type BackendPod,
  type E2eEnvironment,
} from "./environment.js";

const REPLICAS = 3;
const SERVICE = "gated";
const SETTLE_MS = settleMs();
const BUILT_IN = "endpointslice-controller.k8s.io";

describe("drain method ReadinessGate end to end", () => {
  let env: E2eEnvironment;
  let namespace: string;
  let core: CoreV1Api;
  let discovery: DiscoveryV1Api;
  let pods: BackendPod[] = [];

  const apply = (obj: object) =>
    kubectl(
      env.kubeconfigPath,
      ["apply", "--server-side", "--field-manager=healthprobe-e2e", "-f", "-"],
      stringify(obj),
    );

  /** Endpoint readiness by address in the Service's slices written by the built-in controller. */
  const builtInEndpoints = async (): Promise<Map<string, boolean>> => {
    const list = await discovery.listNamespacedEndpointSlice({
      namespace,
      labelSelector: `kubernetes.io/service-name=${SERVICE},endpointslice.kubernetes.io/managed-by=${BUILT_IN}`,
    });
    const byIp = new Map<string, boolean>();
    for (const s of list.items)
      for (const e of s.endpoints ?? []) for (const a of e.addresses) byIp.set(a, e.conditions?.ready === true);
    return byIp;
  };

  const settle = <T>(probe: () => Promise<T | undefined | false>, what: string): Promise<T> =>
    waitExplained(env, probe, what, SETTLE_MS);

  beforeAll(async () => {
    env = await startEnvironment();
    const kc = new KubeConfig();
    kc.loadFromFile(env.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    discovery = kc.makeApiClient(DiscoveryV1Api);
    namespace = `hp-gate-${Math.random().toString(36).slice(2, 8)}`;
    await ensureCrd(env.kubeconfigPath);
    await apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    await apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: SERVICE, namespace },
      spec: {
        selector: { app: SERVICE },
        ports: [{ name: "http", port: 80, targetPort: BACKEND_PORT, protocol: "TCP" }],
      },
    });
    await apply({
      apiVersion: "healthprobe.io/v1alpha1",
      kind: "HealthProbePolicy",
      metadata: { name: SERVICE, namespace },
      spec: {
        selector: { matchLabels: { app: SERVICE } },
        probe: { port: BACKEND_PORT, path: HEALTH_PATH, periodSeconds: 1, timeoutSeconds: 1 },
        evaluation: { failureThreshold: 2, successThreshold: 1 },
        drain: { method: "ReadinessGate", maxUnhealthyPercent: 50 },
        replacement: { enabled: false },
      },
    });
    await apply({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: SERVICE, namespace },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: { app: SERVICE } },
        template: {
          metadata: { labels: { app: SERVICE } },
          spec: { ...env.backendPodSpec(), readinessGates: [{ conditionType: "healthprobe.io/ready" }] },
        },
      },
    });
    pods = await settle(async () => {
      const list = await core.listNamespacedPod({ namespace, labelSelector: `app=${SERVICE}` });
      const running = list.items.filter(
        (p) =>
          p.status?.podIP &&
          p.status.conditions?.some((c) => c.type === "ContainersReady" && c.status === "True") &&
          !p.metadata?.deletionTimestamp,
      );
      return (
        running.length === REPLICAS &&
        running.map((p) => ({ name: p.metadata!.name!, namespace, ip: p.status!.podIP! }))
      );
    }, `${REPLICAS} running pods`);
    await env.serve(pods);
  }, startMs() + SETTLE_MS);

  afterAll(async () => {
    if (!env) return;
    if (namespace && env.mode === "cluster")
      await kubectl(env.kubeconfigPath, ["delete", "namespace", namespace, "--wait=false"]).catch(() => undefined);
    await env.stop();
  }, 120_000);

  it(
    "admits every pod after its first successful probe: Ready, and ready in the built-in EndpointSlices",
    async () => {
      const endpoints = await settle(async () => {
        const e = await builtInEndpoints();
        return pods.every((p) => e.get(p.ip) === true) && e;
      }, "every pod ready in the built-in EndpointSlices");
      expect([...endpoints.keys()].sort()).toEqual(pods.map((p) => p.ip).sort());
    },
    SETTLE_MS + 10_000,
  );

  it(
    "a failing pod leaves the built-in EndpointSlices through its gate condition, and returns when it recovers",
    async () => {
      const sick = pods[0]!;
      await env.setHealthy(sick, false);
      await settle(async () => {
        const e = await builtInEndpoints();
        return e.get(sick.ip) === false && pods.slice(1).every((p) => e.get(p.ip) === true);
      }, `${sick.name} out of the built-in slices while the others stay ready`);
      const pod = await core.readNamespacedPod({ name: sick.name, namespace });
      expect(pod.status?.conditions?.find((c) => c.type === "healthprobe.io/ready")).toMatchObject({
        status: "False",
        reason: "Unhealthy",
      });

      await env.setHealthy(sick, true);
      await settle(async () => {
        const e = await builtInEndpoints();
        return pods.every((p) => e.get(p.ip) === true);
      }, `${sick.name} back in the built-in slices`);
    },
    2 * SETTLE_MS + 10_000,
  );
});
