// TCP and gRPC probes end to end on the real node (HEALTHPROBE_TEST_CLUSTER=real-node): pods of the
// workload image answer TCP on port 9000 and grpc.health.v1.Health/Check on 9090; a pod whose TCP
// listener stops accepting, or whose gRPC health turns NOT_SERVING, leaves the operator's
// EndpointSlices and comes back. Elsewhere the pod servers answer HTTP only: skipped there.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CoreV1Api, DiscoveryV1Api, KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { MANAGED_BY_VALUE } from "../../operator/src/api/group.js";
import {
  ensureCrd,
  environmentMode,
  kubectl,
  settleMs,
  startEnvironment,
  startMs,
  waitExplained,
  type BackendPod,
} from "./environment.js";
import type { RealNodeEnvironment } from "./real-node-environment.js";

const REPLICAS = 2;
const SETTLE_MS = settleMs();

interface Case {
  name: string;
  probe: object;
  sick: [path: string, body: object];
  well: [path: string, body: object];
}

const cases: Case[] = [
  {
    name: "tcp",
    probe: { type: "TCP", port: "tcp" },
    sick: ["/close", { listener: "tcp" }],
    well: ["/listen", { listener: "tcp" }],
  },
  {
    name: "grpc",
    probe: { type: "GRPC", port: "grpc" },
    sick: ["/grpc", { service: "", status: "NOT_SERVING" }],
    well: ["/grpc", { service: "", status: "SERVING" }],
  },
];

(environmentMode() === "real-node" ? describe : describe.skip)("TCP and gRPC probes on the real node", () => {
  let env: RealNodeEnvironment;
  let namespace: string;
  let core: CoreV1Api;
  let discovery: DiscoveryV1Api;
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

  beforeAll(
    async () => {
      env = (await startEnvironment()) as RealNodeEnvironment;
      const kc = new KubeConfig();
      kc.loadFromFile(env.kubeconfigPath);
      core = kc.makeApiClient(CoreV1Api);
      discovery = kc.makeApiClient(DiscoveryV1Api);
      namespace = `hp-types-${Math.random().toString(36).slice(2, 8)}`;
      await ensureCrd(env.kubeconfigPath);
      await apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
      for (const c of cases) {
        const port = c.name === "tcp" ? 9000 : 9090;
        await apply({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: c.name, namespace },
          spec: { ports: [{ name: c.name, port, targetPort: port, protocol: "TCP" }] },
        });
        await apply({
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          metadata: { name: c.name, namespace },
          spec: {
            replicas: REPLICAS,
            selector: { matchLabels: { app: c.name } },
            template: { metadata: { labels: { app: c.name } }, spec: env.backendPodSpec() },
          },
        });
        await apply({
          apiVersion: "healthprobe.io/v1alpha1",
          kind: "HealthProbePolicy",
          metadata: { name: c.name, namespace },
          spec: {
            serviceName: c.name,
            selector: { matchLabels: { app: c.name } },
            probe: { ...c.probe, periodSeconds: 1, timeoutSeconds: 1 },
            evaluation: { failureThreshold: 2, successThreshold: 1 },
            drain: { enabled: true, maxUnhealthyPercent: 50 },
            replacement: { enabled: false },
          },
        });
      }
      for (const c of cases) {
        pods.set(
          c.name,
          await waitExplained(
            env,
            async () => {
              const list = await core.listNamespacedPod({ namespace, labelSelector: `app=${c.name}` });
              const ready = list.items.filter(
                (p) =>
                  p.status?.podIP &&
                  p.status.conditions?.some((x) => x.type === "Ready" && x.status === "True") &&
                  !p.metadata?.deletionTimestamp,
              );
              return (
                ready.length === REPLICAS &&
                ready.map((p) => ({ name: p.metadata!.name!, namespace, ip: p.status!.podIP! }))
              );
            },
            `${REPLICAS} ready ${c.name} pods`,
            SETTLE_MS,
          ),
        );
      }
    },
    startMs() + 2 * SETTLE_MS,
  );

  afterAll(async () => {
    await env?.stop();
  }, 120_000);

  it.each(cases)(
    "a $name probe drains the pod that fails it and restores it once it passes again",
    async (c) => {
      const all = pods.get(c.name)!;
      await waitExplained(
        env,
        async () => {
          const e = await readiness(c.name);
          return all.every((p) => e.get(p.ip) === true);
        },
        `every ${c.name} pod ready in the operator's slices`,
        SETTLE_MS,
      );
      const [sick, well] = [all[0]!, all[1]!];
      await env.control(sick, ...c.sick);
      const drained = await waitExplained(
        env,
        async () => {
          const e = await readiness(c.name);
          return e.get(sick.ip) === false && e.get(well.ip) === true && e;
        },
        `${sick.name} drained by its ${c.name} probe`,
        SETTLE_MS,
      );
      expect([...drained.keys()].sort()).toEqual(all.map((p) => p.ip).sort());
      await env.control(sick, ...c.well);
      await waitExplained(
        env,
        async () => {
          const e = await readiness(c.name);
          return all.every((p) => e.get(p.ip) === true);
        },
        `${sick.name} ready again`,
        SETTLE_MS,
      );
    },
    3 * SETTLE_MS,
  );
});
