// The operator end to end, through a kubeconfig only: a selector-less Service, a ReplicaSet and a
// HealthProbePolicy; the EndpointSlices follow the pods' health endpoints both ways.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, KubeConfig, type V1EndpointSlice } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { MANAGED_BY_VALUE } from "../../operator/src/api/group.js";
import { requestsBy } from "../../hack/apiserver/index.js";
import { checkRequestsAgainstRbac, rbacRulesFromChart } from "../chart/rbac.js";
import {
  BACKEND_PORT,
  HEALTH_PATH,
  OPERATOR_NAMESPACE,
  OPERATOR_USER,
  ensureCrd,
  environmentMode,
  kubectl,
  settleMs,
  startMs,
  startEnvironment,
  waitExplained,
  type BackendPod,
  type E2eEnvironment,
} from "./environment.js";

const REPLICAS = 3;
const SERVICE = "web";
const POLICY = "web";
const SETTLE_MS = settleMs();

interface PolicyStatus {
  targets?: number;
  healthy?: number;
  drained?: number;
  pods?: Array<{ name: string; state: string; drained?: boolean }>;
  conditions?: Array<{ type: string; status: string }>;
}

describe("healthprobe-operator end to end", () => {
  let env: E2eEnvironment;
  let namespace: string;
  let core: CoreV1Api;
  let discovery: DiscoveryV1Api;
  let custom: CustomObjectsApi;
  let pods: BackendPod[] = [];

  const apply = (obj: object) =>
    kubectl(
      env.kubeconfigPath,
      ["apply", "--server-side", "--field-manager=healthprobe-e2e", "-f", "-"],
      stringify(obj),
    );

  const slicesEndpoints = async (): Promise<Map<string, boolean>> => {
    const list = await discovery.listNamespacedEndpointSlice({
      namespace,
      labelSelector: `kubernetes.io/service-name=${SERVICE}`,
    });
    const ours = list.items.filter(
      (s: V1EndpointSlice) => s.metadata?.labels?.["endpointslice.kubernetes.io/managed-by"] === MANAGED_BY_VALUE,
    );
    const byIp = new Map<string, boolean>();
    for (const s of ours)
      for (const e of s.endpoints ?? []) for (const a of e.addresses) byIp.set(a, e.conditions?.ready === true);
    return byIp;
  };

  const status = async (): Promise<PolicyStatus> => {
    const obj = (await custom.getNamespacedCustomObject({
      group: "healthprobe.io",
      version: "v1alpha1",
      namespace,
      plural: "healthprobepolicies",
      name: POLICY,
    })) as { status?: PolicyStatus };
    return obj.status ?? {};
  };

  const waitWithOperatorOutput = <T>(
    probe: () => Promise<T | undefined | false>,
    what: string,
    timeoutMs = SETTLE_MS,
  ): Promise<T> => waitExplained(env, probe, what, timeoutMs);

  beforeAll(async () => {
    env = await startEnvironment();
    const kc = new KubeConfig();
    kc.loadFromFile(env.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    discovery = kc.makeApiClient(DiscoveryV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    namespace = `hp-e2e-${Math.random().toString(36).slice(2, 8)}`;

    await ensureCrd(env.kubeconfigPath);

    await apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    await apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: SERVICE, namespace },
      // No selector: the operator is the endpoints controller for this Service.
      spec: { ports: [{ name: "http", port: 80, targetPort: BACKEND_PORT, protocol: "TCP" }] },
    });
    await apply({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: SERVICE, namespace },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: { app: SERVICE } },
        template: { metadata: { labels: { app: SERVICE } }, spec: env.backendPodSpec() },
      },
    });

    pods = await waitWithOperatorOutput(async () => {
      const list = await core.listNamespacedPod({ namespace, labelSelector: `app=${SERVICE}` });
      const ready = list.items.filter(
        (p) =>
          p.status?.podIP &&
          p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") &&
          !p.metadata?.deletionTimestamp,
      );
      return (
        ready.length === REPLICAS && ready.map((p) => ({ name: p.metadata!.name!, namespace, ip: p.status!.podIP! }))
      );
    }, `${REPLICAS} ready pods`);
    await env.serve(pods);

    await apply({
      apiVersion: "healthprobe.io/v1alpha1",
      kind: "HealthProbePolicy",
      metadata: { name: POLICY, namespace },
      spec: {
        serviceName: SERVICE,
        selector: { matchLabels: { app: SERVICE } },
        probe: { port: BACKEND_PORT, path: HEALTH_PATH, periodSeconds: 1, timeoutSeconds: 1 },
        evaluation: { failureThreshold: 2, successThreshold: 1 },
        drain: { enabled: true, maxUnhealthyPercent: 50 },
        // Replacement stays off: the scenario is about draining, and pods must keep their names.
        replacement: { enabled: false },
      },
    });
  }, startMs() + SETTLE_MS);

  afterAll(async () => {
    if (!env) return;
    if (namespace && env.mode === "cluster")
      await kubectl(env.kubeconfigPath, ["delete", "namespace", namespace, "--wait=false"]).catch(() => undefined);
    await env.stop();
  }, 120_000);

  it(
    "writes EndpointSlices with every pod ready once all probes succeed",
    async () => {
      const endpoints = await waitWithOperatorOutput(async () => {
        const e = await slicesEndpoints();
        return pods.every((p) => e.get(p.ip) === true) && e;
      }, "every pod ready in the operator's EndpointSlices");
      expect([...endpoints.keys()].sort()).toEqual(pods.map((p) => p.ip).sort());
      const s = await waitWithOperatorOutput(async () => {
        const st = await status();
        return st.healthy === REPLICAS && st;
      }, "status to count every pod Healthy");
      expect(s).toMatchObject({ targets: REPLICAS, healthy: REPLICAS, drained: 0 });
    },
    SETTLE_MS + 10_000,
  );

  it(
    "drains a pod whose health endpoint fails, and status shows it",
    async () => {
      const sick = pods[0]!;
      await env.setHealthy(sick, false);
      await waitWithOperatorOutput(async () => {
        const e = await slicesEndpoints();
        return e.get(sick.ip) === false && pods.slice(1).every((p) => e.get(p.ip) === true);
      }, `${sick.name} drained while the others stay ready`);
      const s = await waitWithOperatorOutput(async () => {
        const st = await status();
        return st.drained === 1 && st;
      }, "status to count one drained pod");
      expect(s.pods?.find((p) => p.name === sick.name)).toMatchObject({ state: "Unhealthy", drained: true });
    },
    SETTLE_MS + 10_000,
  );

  it(
    "restores the pod once its health endpoint recovers",
    async () => {
      const sick = pods[0]!;
      await env.setHealthy(sick, true);
      await waitWithOperatorOutput(async () => {
        const e = await slicesEndpoints();
        return pods.every((p) => e.get(p.ip) === true);
      }, `${sick.name} ready again`);
      const s = await waitWithOperatorOutput(async () => {
        const st = await status();
        return st.drained === 0 && st.healthy === REPLICAS && st;
      }, "status to count no drained pod");
      expect(s.pods?.find((p) => p.name === sick.name)?.state ?? "Healthy").toBe("Healthy");
    },
    SETTLE_MS + 10_000,
  );

  it("shows the printer columns in kubectl get hpp", async () => {
    const out = await kubectl(env.kubeconfigPath, ["get", "hpp", "-n", namespace]);
    const [header, row] = out.trim().split("\n");
    expect(header!.split(/\s{2,}/)).toEqual([
      "NAME",
      "SERVICE",
      "TARGETS",
      "HEALTHY",
      "DRAINED",
      "REPLACED(24H)",
      "READY",
      "AGE",
    ]);
    expect(row!.split(/\s+/).slice(0, 5)).toEqual([POLICY, SERVICE, String(REPLICAS), String(REPLICAS), "0"]);
  });

  it("shows the counts and conditions behind them with kubectl get hpp -o wide", async () => {
    const out = await kubectl(env.kubeconfigPath, ["get", "hpp", "-n", namespace, "-o", "wide"]);
    const [header, row] = out.trim().split("\n");
    expect(header!.split(/\s{2,}/)).toEqual([
      "NAME",
      "SERVICE",
      "TARGETS",
      "HEALTHY",
      "DRAINED",
      "REPLACED(24H)",
      "READY",
      "AGE",
      "UNHEALTHY",
      "UNKNOWN",
      "REASON",
      "DEGRADED",
      "FAILOPEN",
      "FAILCLOSED",
      "CAPPED",
      "REPLACEMENT",
      "SHARD",
    ]);
    // Cells by the header's column offsets: a condition the policy does not report (FailClosed here) prints empty.
    const starts = [...header!.matchAll(/\S+/g)].map((m) => m.index);
    const cells = starts.map((start, i) => row!.slice(start, starts[i + 1]).trim());
    expect(cells.slice(8, -1)).toEqual(["0", "0", "Reconciled", "False", "False", "", "False", "NotBlocked"]);
    // SHARD names the owning replica where the chart installed the operator (shards on by default);
    // it is empty where the suite starts the operator itself, with leader election.
    if (env.mode === "real-node" || env.mode === "cluster") expect(cells.at(-1)).toMatch(/operator/);
    else expect(cells.at(-1)).toBe("");
  });

  it("names every status field in words in kubectl describe hpp", async () => {
    const out = await kubectl(env.kubeconfigPath, ["describe", "hpp", POLICY, "-n", namespace]);
    for (const label of ["Observed Generation:", "Targets:", "Healthy:", "Drained:", "Replaced In Last Day:"])
      expect(out).toContain(label);
    // kubectl prints a field name as it is when it cannot split it into words (a digit in it, say).
    expect(out).not.toMatch(/^\s+[a-z]+[A-Z0-9][A-Za-z0-9]*:/m);
  });

  // Only the test server shows its request log; elsewhere the test does not apply.
  (environmentMode() === "test-server" ? it : it.skip)(
    "made only requests the chart's RBAC grants (test server only, where the request log is visible)",
    () => {
      expect(env.server).toBeDefined();
      const requests = requestsBy(env.server!.requestLog, { user: OPERATOR_USER });
      expect(requests.length).toBeGreaterThan(0);
      const { missing } = checkRequestsAgainstRbac(requests, rbacRulesFromChart({ namespace: OPERATOR_NAMESPACE }));
      expect(missing).toEqual([]);
    },
  );
});
