// Small builders of the Kubernetes objects the controller parts read. Defaults describe one
// ordinary namespace "shop" with a selector-less Service "web" and Running, Ready pods.
import type { PodObject, PolicyObject, ServiceObject } from "../kube-objects.js";

export const NS = "shop";

export function aPolicyObject(
  name = "web",
  spec: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
): PolicyObject {
  return {
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      generation: 1,
      resourceVersion: "1",
      creationTimestamp: "2026-01-01T00:00:00Z",
      ...meta,
    },
    spec: {
      serviceName: "web",
      selector: { matchLabels: { app: "web" } },
      probe: { port: 8080, path: "/healthz" },
      ...spec,
    },
  };
}

export function aServiceObject(
  name = "web",
  spec: ServiceObject["spec"] = { ports: [{ port: 80, targetPort: 8080 }] },
): ServiceObject {
  return { apiVersion: "v1", kind: "Service", metadata: { name, namespace: NS, uid: `uid-svc-${name}` }, spec };
}

export function aPodObject(
  name: string,
  opts: {
    labels?: Record<string, string>;
    ip?: string;
    ready?: boolean;
    phase?: string;
    owner?: boolean;
    terminating?: boolean;
  } = {},
): PodObject {
  const pod: PodObject = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      resourceVersion: "1",
      labels: opts.labels ?? { app: "web" },
      ownerReferences:
        opts.owner === false
          ? []
          : [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-rs", uid: "uid-rs", controller: true }],
    },
    spec: { nodeName: "node-a", containers: [{ name: "app", ports: [{ name: "http", containerPort: 8080 }] }] },
    status: {
      phase: opts.phase ?? "Running",
      podIP: opts.ip ?? "10.0.0.1",
      podIPs: [{ ip: opts.ip ?? "10.0.0.1" }],
      conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }],
    },
  };
  if (opts.terminating) pod.metadata!.deletionTimestamp = "2026-01-01T00:00:00Z";
  return pod;
}

/**
 * A pod with the readiness gate healthprobe.io/ready: containers ready (unless `containersReady`
 * is false), the gate condition as given (none by default), and Ready as the kubelet folds them.
 */
export function aGatedPod(
  name: string,
  opts: {
    gate?: "True" | "False";
    reason?: string;
    message?: string;
    containersReady?: boolean;
    gated?: boolean;
    labels?: Record<string, string>;
  } = {},
): PodObject {
  const pod = aPodObject(name, opts.labels ? { labels: opts.labels } : {});
  const containersReady = opts.containersReady ?? true;
  const gated = opts.gated ?? true;
  if (gated) pod.spec!.readinessGates = [{ conditionType: "healthprobe.io/ready" }];
  const ready = containersReady && (!gated || opts.gate === "True");
  pod.status!.conditions = [
    { type: "ContainersReady", status: containersReady ? "True" : "False" },
    { type: "Ready", status: ready ? "True" : "False" },
    ...(opts.gate
      ? [
          {
            type: "healthprobe.io/ready",
            status: opts.gate,
            ...(opts.reason ? { reason: opts.reason } : {}),
            ...(opts.message ? { message: opts.message } : {}),
          },
        ]
      : []),
  ];
  return pod;
}
