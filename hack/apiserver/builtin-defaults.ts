// A few defaults and create-time resets the real server applies to built-in kinds.
import type { KubeObject } from "./store.js";

function defaultContainer(c: Record<string, any>): void {
  if (!c || typeof c !== "object") return;
  const image = String(c.image ?? "");
  c.imagePullPolicy ??= image.endsWith(":latest") || !image.includes(":") ? "Always" : "IfNotPresent";
  c.terminationMessagePath ??= "/dev/termination-log";
  c.terminationMessagePolicy ??= "File";
  c.resources ??= {};
  for (const p of (c.ports ?? []) as Array<Record<string, any>>) p.protocol ??= "TCP";
}

function defaultPodSpec(spec: Record<string, any> | undefined): void {
  if (!spec || typeof spec !== "object") return;
  for (const c of (spec.containers ?? []) as Array<Record<string, any>>) defaultContainer(c);
  for (const c of (spec.initContainers ?? []) as Array<Record<string, any>>) defaultContainer(c);
  spec.restartPolicy ??= "Always";
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= "ClusterFirst";
  if (spec.serviceAccountName === undefined && spec.serviceAccount === undefined) spec.serviceAccountName = "default";
  spec.serviceAccount ??= spec.serviceAccountName;
  spec.serviceAccountName ??= spec.serviceAccount;
}

let nextServiceIp = 1;

/**
 * A Secret's stringData is write-only: decoding folds it into data (base64, winning over data's same keys)
 * and it is never stored, as the core v1 conversion does.
 */
function mergeStringData(secret: KubeObject): void {
  const stringData = secret.stringData;
  delete secret.stringData;
  if (stringData === null || typeof stringData !== "object" || Array.isArray(stringData)) return;
  const data: Record<string, unknown> = secret.data !== null && typeof secret.data === "object" ? secret.data : {};
  for (const [key, value] of Object.entries(stringData as Record<string, unknown>))
    data[key] = Buffer.from(String(value), "utf8").toString("base64");
  secret.data = data;
}

/** Defaults applied on create and update (the real defaulting runs on every decode). */
export function applyBuiltinDefaults(group: string, kind: string, obj: KubeObject): void {
  if (group === "" && kind === "Pod") defaultPodSpec(obj.spec);
  if (group === "apps" && (kind === "ReplicaSet" || kind === "Deployment")) {
    obj.spec ??= {};
    obj.spec.replicas ??= 1;
    defaultPodSpec(obj.spec.template?.spec);
  }
  if (group === "" && kind === "Service") {
    const spec = (obj.spec ??= {});
    spec.type ??= "ClusterIP";
    spec.sessionAffinity ??= "None";
    for (const p of (spec.ports ?? []) as Array<Record<string, any>>) {
      p.protocol ??= "TCP";
      p.targetPort ??= p.port;
    }
    spec.internalTrafficPolicy ??= "Cluster";
  }
  if (group === "discovery.k8s.io" && kind === "EndpointSlice") {
    for (const p of (obj.ports ?? []) as Array<Record<string, any>>) {
      if (p && typeof p === "object") {
        p.protocol ??= "TCP";
        p.name ??= "";
      }
    }
  }
  if (group === "" && kind === "Secret") {
    mergeStringData(obj);
    obj.type ??= "Opaque";
  }
  if (group === "" && kind === "Namespace") {
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), "kubernetes.io/metadata.name": obj.metadata.name };
  }
}

/** Resets of status and allocations on create, as the real strategies' PrepareForCreate do. */
export function prepareBuiltinCreate(group: string, kind: string, obj: KubeObject): void {
  if (group === "" && kind === "Pod") {
    obj.status = { phase: "Pending" };
  } else if (group === "" && kind === "Namespace") {
    obj.spec = { finalizers: ["kubernetes"] };
    obj.status = { phase: "Active" };
  } else if (group === "" && kind === "Service") {
    const spec = obj.spec;
    if (spec.clusterIP === undefined || spec.clusterIP === "") {
      const n = nextServiceIp++;
      spec.clusterIP = `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
    }
    spec.clusterIPs ??= [spec.clusterIP];
    if (spec.clusterIP !== "None") {
      spec.ipFamilies ??= ["IPv4"];
      spec.ipFamilyPolicy ??= "SingleStack";
    }
    obj.status = { loadBalancer: {} };
  } else if (group === "" && kind === "Node") {
    // Nodes keep the status they are created with: tests register ready nodes in one call.
  } else if (group === "policy" && kind === "PodDisruptionBudget") {
    obj.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  } else if (["apps", "apiextensions.k8s.io"].includes(group)) {
    delete obj.status;
  }
}
