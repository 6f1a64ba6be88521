// Applies a history step to the cluster as a user would, over HTTP: pods, Services, policies,
// kubelet readiness, pod answers, API faults and replica crashes.
import type { CoreV1Api } from "@kubernetes/client-node";
import type { Clock } from "../../operator/src/runtime/clock.js";
import { aPod, aService, type Obj, type TestServerCluster } from "../integration/support/cluster.js";
import type { Fleet } from "./fleet.js";
import type { Action, PolicyChoice } from "./history.js";
import type { PodMode, PodServers } from "./pod-servers.js";

export interface SimEnv {
  cluster: TestServerCluster;
  clock: Clock;
  core: CoreV1Api;
  servers: PodServers;
  fleet: Fleet;
  /** Pod name -> the answer its server gives (applied once it has an IP). */
  modes: Map<string, PodMode>;
  /** Pod name -> its IP once the kubelet stand-in gave it one. */
  ips: Map<string, string>;
  /** Owner references for controlled pods (per app) and mirror pods, to real objects. */
  owners: { replicaSets: Record<string, Obj>; node: Obj | undefined };
}

/** The owners pods point at: the API's garbage collector deletes pods whose owner is missing. */
export async function createOwners(env: SimEnv, apps: readonly string[]): Promise<void> {
  const { cluster } = env;
  env.owners.node = await cluster.create({ apiVersion: "v1", kind: "Node", metadata: { name: "node-1" } });
  for (const app of apps) {
    // No ReplicaSet controller runs: a ReplicaSet of zero replicas only gives pods a controller.
    env.owners.replicaSets[app] = await cluster.create({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: `${app}-rs`, namespace: cluster.namespace },
      spec: {
        replicas: 0,
        selector: { matchLabels: { rs: app } },
        template: {
          metadata: { labels: { rs: app } },
          spec: { containers: [{ name: "app", image: "registry.example/web:1" }] },
        },
      },
    });
  }
}

function ownerRef(o: Obj): Record<string, unknown> {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata!.name, uid: o.metadata!.uid, controller: true };
}

const HPP = "healthprobe.io/v1alpha1";

/** The user's own writes ride out injected faults the way kubectl users retry. */
async function retrying(what: string, fn: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await fn();
      return;
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === 404) return;
      if (attempt >= 8) throw new Error(`simulation write failed: ${what}`, { cause: err });
    }
  }
}

export function policyObject(name: string, namespace: string, c: PolicyChoice): Obj {
  return {
    apiVersion: HPP,
    kind: "HealthProbePolicy",
    metadata: { name, namespace },
    spec: {
      serviceName: c.serviceName,
      selector: { matchLabels: { app: c.app } },
      dryRun: c.dryRun,
      probe: { port: 8080, path: "/healthz", periodSeconds: c.periodSeconds, timeoutSeconds: 1 },
      evaluation: {
        failureThreshold: c.failureThreshold,
        successThreshold: 1,
        ...(c.flapQuarantine ? { flapQuarantine: c.flapQuarantine } : {}),
      },
      drain: {
        enabled: true,
        maxUnhealthyPercent: c.maxUnhealthyPercent,
        whenAllUnhealthy: c.whenAllUnhealthy,
        method: c.method ?? "EndpointSlice",
      },
      replacement: {
        enabled: true,
        after: "30s",
        maxPerHour: c.maxPerHour,
        maxPerDay: c.maxPerDay,
        pauseAboveUnhealthyPercent: c.pauseAboveUnhealthyPercent,
      },
    },
  };
}

function podObject(env: SimEnv, name: string, app: string, owner: string): Obj {
  const rs = env.owners.replicaSets[app];
  const node = env.owners.node;
  const ownerReferences =
    owner === "controller" && rs ? [ownerRef(rs)] : owner === "mirror" && node ? [ownerRef(node)] : undefined;
  const pod = aPod(name, env.cluster.namespace, { labels: { app }, ...(ownerReferences ? { ownerReferences } : {}) });
  // Every pod carries the readiness gate: with no ReadinessGate policy holding it, the operator
  // admits it (True, NoPolicy), so the EndpointSlice method sees the kubelet's Ready as before.
  pod.spec.readinessGates = [{ conditionType: "healthprobe.io/ready" }];
  return pod;
}

async function setKubeletReady(env: SimEnv, name: string, ready: boolean): Promise<void> {
  const namespace = env.cluster.namespace;
  await retrying(`pod ${name} Ready=${ready}`, async () => {
    const pod = await env.core.readNamespacedPod({ name, namespace });
    if (!pod.status?.podIP) return;
    const status = ready ? "True" : "False";
    pod.status.conditions = (pod.status.conditions ?? []).map((c) =>
      (c.type === "Ready" || c.type === "ContainersReady") && c.status !== status
        ? { ...c, status, lastTransitionTime: new Date() }
        : c,
    );
    await env.core.replaceNamespacedPodStatus({ name, namespace, body: pod });
  });
}

async function setMode(env: SimEnv, name: string, mode: PodMode): Promise<void> {
  env.modes.set(name, mode);
  const ip = env.ips.get(name);
  if (ip) await env.servers.setMode(ip, mode);
}

export async function applyAction(env: SimEnv, a: Action): Promise<void> {
  const { cluster } = env;
  const ns = cluster.namespace;
  switch (a.kind) {
    case "createPod":
      env.modes.set(a.name, a.mode);
      return retrying(`create pod ${a.name}`, () => cluster.create(podObject(env, a.name, a.app, a.owner)));
    case "deletePod":
      return retrying(`delete pod ${a.name}`, () => cluster.remove("v1", "Pod", a.name));
    case "relabelPod":
      return retrying(`relabel ${a.name}`, () =>
        cluster.patch({
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: a.name, namespace: ns, labels: { app: a.app } },
        }),
      );
    case "kubeletReady":
      return setKubeletReady(env, a.name, a.ready);
    case "probeMode":
      return setMode(env, a.name, a.mode);
    case "createPolicy":
      return retrying(`create policy ${a.name}`, () => cluster.create(policyObject(a.name, ns, a.spec)));
    case "editPolicy": {
      const { spec } = policyObject(a.name, ns, a.spec);
      return retrying(`edit policy ${a.name}`, () =>
        cluster.patch({ apiVersion: HPP, kind: "HealthProbePolicy", metadata: { name: a.name, namespace: ns }, spec }),
      );
    }
    case "deletePolicy":
      return retrying(`delete policy ${a.name}`, () => cluster.remove(HPP, "HealthProbePolicy", a.name));
    case "createService":
      return retrying(`create Service ${a.name}`, () => cluster.create(aService(a.name, ns)));
    case "deleteService":
      return retrying(`delete Service ${a.name}`, () => cluster.remove("v1", "Service", a.name));
    case "serviceSelector":
      return retrying(`Service ${a.name} selector`, () =>
        cluster.patch({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: a.name, namespace: ns },
          spec: { selector: a.app ? { app: a.app } : null },
        }),
      );
    case "apiFault": {
      const code = a.fault === "409" ? 409 : a.fault === "timeout" ? 504 : 500;
      const verb = a.fault === "409" ? "update" : undefined;
      cluster.server.faults.failNext({ count: a.count, code, resource: a.resource, ...(verb ? { verb } : {}) });
      return;
    }
    case "dropWatches":
      cluster.server.faults.dropWatches();
      return;
    case "expireWatches":
      // Every watch resumes from a resourceVersion now too old: 410 Gone, then a relist.
      cluster.server.faults.expireWatchesBefore(cluster.server.store.resourceVersion());
      cluster.server.faults.dropWatches();
      return;
    case "crash":
      env.clock.setTimeout(() => env.fleet.crash(), a.afterMs);
      return;
    case "leaderChange":
      env.clock.setTimeout(() => void env.fleet.leaderChange(a.graceful), a.afterMs);
      return;
    case "wait":
      return;
  }
}

/** Serves every pod that got an IP since the last call, with the answer the history gave it. */
export async function servePods(env: SimEnv): Promise<void> {
  for (const p of env.cluster.server.store.list(
    { group: "", version: "v1", resource: "pods" },
    env.cluster.namespace,
  ) as Obj[]) {
    const ip = p.status?.podIP as string | undefined;
    const name = p.metadata?.name as string;
    if (!ip || env.ips.get(name) === ip) continue;
    env.ips.set(name, ip);
    await env.servers.serve(ip, env.modes.get(name) ?? "healthy");
  }
}
