// The scale benchmark on the real control plane (hack/control-plane): pods get addresses from a
// routed /16 in the control plane's network namespace, where one pod server answers for every
// address (no server per pod); the operator runs on this host and probes through the veth, as in
// the e2e suites. kube-apiserver keeps no request log, so the operator's writes are read from its
// audit log, which records the operator user's write requests and nothing else.
import { readFileSync } from "node:fs";
import { KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { Agent, fetch as undiciFetch } from "undici";
import { startControlPlane, type ControlPlane } from "../../../hack/control-plane/control-plane.js";
import { installCrd } from "../../support/kube-objects.js";
import { waitFor } from "../../support/wait-for.js";
import { runningIn, type PlainPod, type PodView } from "../pods-running.js";
import { startPodServerProcess, type PodServerProcess } from "./pod-server-process.js";
import {
  createScaleObjects,
  scalePaths,
  type OperatorWrite,
  type PolicyStatus,
  type ScaleCluster,
  type ScaleClusterOptions,
} from "./scale-cluster.js";
import { createAll, type ScaleShape } from "./scale-objects.js";
import type { AuditEvent } from "../../../hack/control-plane/audit.js";

const OPERATOR_USER = "operator";
const WRITE_VERBS = ["create", "update", "patch", "delete", "deletecollection"];

/** Metadata of the operator user's writes, once each has completed; nothing else. */
export const AUDIT_POLICY = {
  apiVersion: "audit.k8s.io/v1",
  kind: "Policy",
  omitStages: ["RequestReceived"],
  rules: [{ level: "Metadata", users: [OPERATOR_USER], verbs: WRITE_VERBS }, { level: "None" }],
};

/** The operator's writes in an audit log's JSON lines. */
export function writesInAuditLog(text: string): OperatorWrite[] {
  const out: OperatorWrite[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    const e = JSON.parse(line) as AuditEvent;
    if (e.stage !== "ResponseComplete" || e.user?.username !== OPERATOR_USER || !WRITE_VERBS.includes(e.verb ?? ""))
      continue;
    const ref = e.objectRef ?? {};
    out.push({
      time: e.requestReceivedTimestamp ?? "",
      verb: e.verb!,
      resource: ref.subresource ? `${ref.resource}/${ref.subresource}` : (ref.resource ?? ""),
      name: ref.name ?? "",
      code: e.responseStatus?.code ?? 0,
    });
  }
  return out;
}

/** JSON over HTTPS to the control plane as its admin, trusting its own serving certificate. */
function adminClient(cp: ControlPlane) {
  const kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfig("admin"));
  const token = kc.getCurrentUser()!.token!;
  const agent = new Agent({ connect: { rejectUnauthorized: false } });
  const get = async <T>(path: string): Promise<T> => {
    const res = await undiciFetch(cp.url + path, {
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    });
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
    return (await res.json()) as T;
  };
  return { kc, token, get, close: () => agent.close() };
}

type PodList = { items: PlainPod[] };

/** Namespaces, the CRD, and the ServiceAccount pod admission needs. */
async function prepare(kc: KubeConfig, namespace: string): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  await installCrd(api);
  // healthprobe-system: where the operator keeps its Lease and operator-wide ledger.
  for (const name of [namespace, "healthprobe-system"])
    await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  await waitFor(
    () =>
      api.read({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace } }).then(
        () => true,
        () => false,
      ),
    {
      what: `the default ServiceAccount of namespace ${namespace}`,
      timeoutMs: 60_000,
      intervalMs: 200,
    },
  );
}

export async function startRealCluster(opts: ScaleClusterOptions): Promise<ScaleCluster> {
  if (opts.pods > 65_000) throw new Error(`--pods: ${opts.pods}: at most 65000 fit the benchmark's pod range`);
  const kubeletErrors: string[] = [];
  const cp = await startControlPlane({
    routedPods: true,
    auditPolicy: AUDIT_POLICY,
    users: { [OPERATOR_USER]: ["system:masters"] },
    onError: (err) => kubeletErrors.push(err.message),
  });
  const client = adminClient(cp);
  let podServer: PodServerProcess | undefined;
  const stop = async () => {
    await podServer?.close();
    await client.close();
    await cp.stop();
  };
  try {
    podServer = await startPodServerProcess(cp.network.podCidr, { namespace: cp.network.namespace, marker: cp.dir });
    cp.recordPid(podServer.pid);
    await prepare(client.kc, opts.namespace);
  } catch (err) {
    await stop();
    throw err;
  }
  let running: PodView[] = [];
  const create = (path: string, bodies: object[]) =>
    createAll(
      cp.url,
      client.token,
      bodies.map((body) => ({ path, body })),
      16,
      { rejectUnauthorized: false },
    );
  return {
    kind: "real",
    writesFrom: "audit log",
    podServer,
    createObjects(shape: ScaleShape, progress: (line: string) => void): Promise<number> {
      const pods = scalePaths(shape.namespace).pods;
      const podsRunning = async () => {
        // Looks from kube-apiserver's watch cache (resourceVersion=0) spare etcd; the last list is a consistent read.
        await waitFor(
          async () =>
            (running = runningIn((await client.get<PodList>(`${pods}?resourceVersion=0`)).items)).length === shape.pods,
          {
            what: `${shape.pods} pods to run with an address and Ready`,
            timeoutMs: 60_000 + shape.pods * 100,
            intervalMs: Math.max(1000, shape.pods / 2),
          },
        ).catch((err: Error) => {
          throw new Error(
            `${err.message} (${running.length} do; kubelet stand-in errors: ${kubeletErrors.slice(-3).join("; ")})`,
          );
        });
        running = runningIn((await client.get<PodList>(pods)).items);
      };
      return createScaleObjects(
        shape,
        create,
        podsRunning,
        progress,
        ` (control plane up in ${cp.startMs} ms, pods on ${cp.network.podCidr})`,
      );
    },
    runningPods: () => running,
    writeOperatorKubeconfig: (path) => cp.writeKubeconfig(path, OPERATOR_USER),
    watchKubeConfig: () => client.kc,
    operatorWrites: async () => writesInAuditLog(readFileSync(cp.auditLog!, "utf8")),
    async policyStatuses(): Promise<PolicyStatus[]> {
      const list = await client.get<{
        items: Array<{ metadata: { name: string; resourceVersion: string }; status?: Record<string, unknown> }>;
      }>(scalePaths(opts.namespace).policies);
      return list.items.map((p) => ({
        name: p.metadata.name,
        resourceVersion: p.metadata.resourceVersion,
        status: p.status,
      }));
    },
    stop,
  };
}
