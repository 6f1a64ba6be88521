// The drain cap, fail-open and replacement end to end, through a kubeconfig only. ReplicaSet
// "capped" (4 pods, replacement off): 3 sick pods, only 2 drained (maxUnhealthyPercent 50); all 4
// sick, none drained (fail open). ReplicaSet "replaced" (2 pods, replacement after 30 s, one per
// hour): a pod that stays sick is evicted through the Eviction API, terminates gracefully and its
// ReplicaSet's new pod takes its place; the ledger holds it.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, KubeConfig, type CoreV1Event } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { MANAGED_BY_VALUE } from "../../operator/src/api/group.js";
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

const SETTLE_MS = settleMs();
const REPLACE_AFTER_S = 30;

interface PolicyStatus {
  drained?: number;
  pods?: Array<{ name: string; state: string; drained?: boolean }>;
  conditions?: Array<{ type: string; status: string; reason?: string }>;
  replacements?: Array<{ pod: string; method: string }>;
}

describe("the drain cap, fail-open and replacement end to end", () => {
  let env: E2eEnvironment;
  let namespace: string;
  let core: CoreV1Api;
  let discovery: DiscoveryV1Api;
  let custom: CustomObjectsApi;
  const pods = new Map<string, BackendPod[]>();

  const apply = (obj: object) =>
    kubectl(
      env.kubeconfigPath,
      ["apply", "--server-side", "--field-manager=healthprobe-e2e", "-f", "-"],
      stringify(obj),
    );
  const readiness = async (service: string): Promise<Map<string, boolean>> => {
    const list = await discovery.listNamespacedEndpointSlice({
      namespace,
      labelSelector: `kubernetes.io/service-name=${service},endpointslice.kubernetes.io/managed-by=${MANAGED_BY_VALUE}`,
    });
    const byIp = new Map<string, boolean>();
    for (const s of list.items)
      for (const e of s.endpoints ?? []) for (const a of e.addresses) byIp.set(a, e.conditions?.ready === true);
    return byIp;
  };
  const status = async (name: string): Promise<PolicyStatus> =>
    (
      (await custom.getNamespacedCustomObject({
        group: "healthprobe.io",
        version: "v1alpha1",
        namespace,
        plural: "healthprobepolicies",
        name,
      })) as { status?: PolicyStatus }
    ).status ?? {};
  const conditionOf = (s: PolicyStatus, type: string): string | undefined =>
    s.conditions?.find((c) => c.type === type)?.status;
  const readyPods = async (app: string, count: number): Promise<BackendPod[] | false> => {
    const list = await core.listNamespacedPod({ namespace, labelSelector: `app=${app}` });
    const ready = list.items.filter(
      (p) =>
        p.status?.podIP &&
        p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") &&
        !p.metadata?.deletionTimestamp,
    );
    return ready.length === count && ready.map((p) => ({ name: p.metadata!.name!, namespace, ip: p.status!.podIP! }));
  };
  const settle = <T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = SETTLE_MS): Promise<T> =>
    waitExplained(env, probe, what, timeoutMs);

  const setUp = async (app: string, replicas: number, replacement: object): Promise<void> => {
    await apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: app, namespace },
      spec: { ports: [{ name: "http", port: 80, targetPort: BACKEND_PORT, protocol: "TCP" }] },
    });
    await apply({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: app, namespace },
      spec: {
        replicas,
        selector: { matchLabels: { app } },
        template: { metadata: { labels: { app } }, spec: env.backendPodSpec() },
      },
    });
    pods.set(app, await settle(() => readyPods(app, replicas), `${replicas} ready ${app} pods`));
    await env.serve(pods.get(app)!);
    await apply({
      apiVersion: "healthprobe.io/v1alpha1",
      kind: "HealthProbePolicy",
      metadata: { name: app, namespace },
      spec: {
        serviceName: app,
        selector: { matchLabels: { app } },
        probe: { port: BACKEND_PORT, path: HEALTH_PATH, periodSeconds: 1, timeoutSeconds: 1 },
        evaluation: { failureThreshold: 2, successThreshold: 1 },
        drain: { enabled: true, maxUnhealthyPercent: 50 },
        replacement,
      },
    });
    await settle(async () => {
      const e = await readiness(app);
      return pods.get(app)!.every((p) => e.get(p.ip) === true);
    }, `every ${app} pod ready in the operator's slices`);
  };

  beforeAll(
    async () => {
      env = await startEnvironment();
      const kc = new KubeConfig();
      kc.loadFromFile(env.kubeconfigPath);
      core = kc.makeApiClient(CoreV1Api);
      discovery = kc.makeApiClient(DiscoveryV1Api);
      custom = kc.makeApiClient(CustomObjectsApi);
      namespace = `hp-budget-${Math.random().toString(36).slice(2, 8)}`;
      await ensureCrd(env.kubeconfigPath);
      await apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
      await setUp("capped", 4, { enabled: false });
      await setUp("replaced", 2, {
        enabled: true,
        after: `${REPLACE_AFTER_S}s`,
        maxPerHour: 1,
        maxPerDay: 1,
        method: "Evict",
        keepDiagnostics: false,
      });
    },
    startMs() + 3 * SETTLE_MS,
  );

  afterAll(async () => {
    if (!env) return;
    if (namespace && env.mode === "cluster")
      await kubectl(env.kubeconfigPath, ["delete", "namespace", namespace, "--wait=false"]).catch(() => undefined);
    await env.stop();
  }, 120_000);

  it(
    "drains at most maxUnhealthyPercent of the pods: with 3 of 4 sick, 2 leave the slices and DrainCapped says why the third stays",
    async () => {
      const all = pods.get("capped")!;
      for (const p of all.slice(0, 3)) await env.setHealthy(p, false);
      const e = await settle(async () => {
        const m = await readiness("capped");
        const out = all.slice(0, 3).filter((p) => m.get(p.ip) === false).length;
        const st = await status("capped");
        return (
          out === 2 &&
          st.pods?.filter((p) => p.state === "Unhealthy").length === 3 &&
          conditionOf(st, "DrainCapped") === "True" &&
          m
        );
      }, "2 of the 3 sick pods drained, DrainCapped True");
      expect(e.get(all[3]!.ip)).toBe(true);
      expect([...e.values()].filter((r) => !r)).toHaveLength(2);
    },
    SETTLE_MS + 10_000,
  );

  it(
    "fails open when every pod is sick: none drained, FailOpen True; FailOpen False again once they recover",
    async () => {
      const all = pods.get("capped")!;
      await env.setHealthy(all[3]!, false);
      await settle(async () => {
        const m = await readiness("capped");
        const st = await status("capped");
        return all.every((p) => m.get(p.ip) === true) && conditionOf(st, "FailOpen") === "True" && st.drained === 0;
      }, "every pod ready again under FailOpen");
      for (const p of all) await env.setHealthy(p, true);
      await settle(async () => {
        const m = await readiness("capped");
        const st = await status("capped");
        return (
          all.every((p) => m.get(p.ip) === true) &&
          conditionOf(st, "FailOpen") === "False" &&
          conditionOf(st, "DrainCapped") !== "True"
        );
      }, "every pod healthy, FailOpen False");
    },
    2 * SETTLE_MS + 10_000,
  );

  it(
    "replaces a pod that stays sick: evicted (method Evict in the ledger, a Replaced Event), stopped by the kubelet on the real node, and its ReplicaSet's new pod takes its place",
    async () => {
      const [sick, well] = pods.get("replaced")!;
      await env.setHealthy(sick!, false);
      await settle(async () => (await readiness("replaced")).get(sick!.ip) === false, `${sick!.name} drained`);
      const st = await settle(
        async () => {
          const s = await status("replaced");
          return s.replacements?.some((r) => r.pod === sick!.name) && s;
        },
        `${sick!.name} in the replacement ledger`,
        REPLACE_AFTER_S * 1000 + SETTLE_MS,
      );
      expect(st.replacements).toEqual([expect.objectContaining({ pod: sick!.name, method: "Evict" })]);
      const next = await settle(async () => {
        const ready = await readyPods("replaced", 2);
        return ready && !ready.some((p) => p.name === sick!.name) && ready;
      }, `a new pod in place of ${sick!.name}`);
      expect(next.map((p) => p.name)).toContain(well!.name);
      await env.serve(next);
      await settle(async () => {
        const e = await readiness("replaced");
        return next.every((p) => e.get(p.ip) === true) && !e.has(sick!.ip);
      }, "the new pod ready in the slices, the old one gone");
      const events = (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${sick!.name}` }))
        .items;
      const reasons = events.map((ev: CoreV1Event) => ev.reason);
      expect(reasons).toContain("Replaced");
      // Only a real kubelet stops containers and says so; the stand-ins finish the pod themselves.
      if (env.mode === "real-node") expect(reasons).toContain("Killing");
    },
    REPLACE_AFTER_S * 1000 + 4 * SETTLE_MS,
  );
});
