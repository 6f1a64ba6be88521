// The operator's writes to the cluster, in one place: EndpointSlices, policy status, evictions,
// the pod condition of the readiness gate, the operator-wide ledger ConfigMap, and the Secret
// reads probe headers need. Every call carries
// context in its error; 404 on delete is success; the caller decides what a 409 means.
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1ConfigMap,
  type V1EndpointSlice,
} from "@kubernetes/client-node";
import { GROUP, PLURAL, VERSION } from "../api/group.js";
import { statusCodeOf } from "./kube-errors.js";

export const FIELD_MANAGER = "healthprobe-operator";

/** One pod condition as the operator writes it through pods/status. */
export interface PodConditionPatch {
  type: string;
  status: "True" | "False";
  reason: string;
  message: string;
  /** Set when the status changes; absent, the pod keeps the time it has. */
  lastTransitionTime?: string;
}

const asStrategicMerge = setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch);

export type EvictionOutcome =
  | { outcome: "evicted" }
  | { outcome: "gone" }
  | { outcome: "blocked"; message: string };

export class ApiWriteError extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
    this.name = "ApiWriteError";
  }
}

function wrap(what: string, err: unknown): ApiWriteError {
  return new ApiWriteError(what, statusCodeOf(err), { cause: err });
}

export class ClusterWriter {
  private readonly core: CoreV1Api;
  private readonly discovery: DiscoveryV1Api;
  private readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.discovery = kc.makeApiClient(DiscoveryV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  async createEndpointSlice(slice: object): Promise<V1EndpointSlice> {
    const s = slice as V1EndpointSlice;
    const ns = s.metadata?.namespace ?? "";
    try {
      return await this.discovery.createNamespacedEndpointSlice({ namespace: ns, body: s, fieldManager: FIELD_MANAGER });
    } catch (err) {
      throw wrap(`creating EndpointSlice ${ns}/${s.metadata?.generateName ?? s.metadata?.name}`, err);
    }
  }

  async replaceEndpointSlice(slice: object): Promise<V1EndpointSlice> {
    const s = slice as V1EndpointSlice;
    const ns = s.metadata?.namespace ?? "";
    const name = s.metadata?.name ?? "";
    try {
      return await this.discovery.replaceNamespacedEndpointSlice({ name, namespace: ns, body: s, fieldManager: FIELD_MANAGER });
    } catch (err) {
      throw wrap(`updating EndpointSlice ${ns}/${name}`, err);
    }
  }

  async deleteEndpointSlice(namespace: string, name: string): Promise<void> {
    try {
      await this.discovery.deleteNamespacedEndpointSlice({ name, namespace });
    } catch (err) {
      if (statusCodeOf(err) === 404) return;
      throw wrap(`deleting EndpointSlice ${namespace}/${name}`, err);
    }
  }

  /**
   * Replaces the policy's status with optimistic concurrency (the cached resourceVersion):
   * the ledger in status must never be lost to a concurrent writer, so a 409 surfaces.
   */
  async replacePolicyStatus(policy: { metadata: { name: string; namespace: string } }, status: object): Promise<{ resourceVersion?: string }> {
    const { name, namespace } = policy.metadata;
    try {
      const out = (await this.custom.replaceNamespacedCustomObjectStatus({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURAL,
        name,
        body: { ...policy, status },
        fieldManager: FIELD_MANAGER,
      })) as { metadata?: { resourceVersion?: string } };
      return { resourceVersion: out?.metadata?.resourceVersion };
    } catch (err) {
      throw wrap(`updating status of HealthProbePolicy ${namespace}/${name}`, err);
    }
  }

  /** Evicts through policy/v1 with a uid precondition, so a recreated pod of the same name is never hit. */
  async evictPod(namespace: string, name: string, uid: string): Promise<EvictionOutcome> {
    try {
      await this.core.createNamespacedPodEviction({
        name,
        namespace,
        body: {
          apiVersion: "policy/v1",
          kind: "Eviction",
          metadata: { name, namespace },
          deleteOptions: { preconditions: { uid } },
        },
      });
      return { outcome: "evicted" };
    } catch (err) {
      if (isPodGone(err)) return { outcome: "gone" };
      if (statusCodeOf(err) === 429) return { outcome: "blocked", message: messageOf(err) };
      throw wrap(`evicting Pod ${namespace}/${name}`, err);
    }
  }

  async deletePod(namespace: string, name: string, uid: string): Promise<EvictionOutcome> {
    try {
      await this.core.deleteNamespacedPod({ name, namespace, body: { preconditions: { uid } } });
      return { outcome: "evicted" };
    } catch (err) {
      if (isPodGone(err)) return { outcome: "gone" };
      throw wrap(`deleting Pod ${namespace}/${name}`, err);
    }
  }

  /**
   * Sets one condition of a pod through pods/status with a strategic merge patch: conditions
   * merge by type, so the kubelet's own conditions, written meanwhile, are never overwritten
   * (a full update would need the pod's resourceVersion and lose to every kubelet heartbeat).
   * The uid in the patch keeps a recreated pod of the same name from getting the verdict.
   * "gone" when the pod no longer exists.
   */
  async patchPodCondition(namespace: string, name: string, uid: string, condition: PodConditionPatch): Promise<"patched" | "gone"> {
    try {
      const body = { metadata: { uid }, status: { conditions: [condition] } };
      await this.core.patchNamespacedPodStatus({ name, namespace, body, fieldManager: FIELD_MANAGER }, asStrategicMerge);
      return "patched";
    } catch (err) {
      if (statusCodeOf(err) === 404) return "gone";
      throw wrap(`setting condition ${condition.type}=${condition.status} on Pod ${namespace}/${name}`, err);
    }
  }

  async readConfigMap(namespace: string, name: string): Promise<V1ConfigMap | undefined> {
    try {
      return await this.core.readNamespacedConfigMap({ name, namespace });
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      throw wrap(`reading ConfigMap ${namespace}/${name}`, err);
    }
  }

  /** Creates or updates (optimistic concurrency via the given resourceVersion) a ConfigMap's data. */
  async writeConfigMap(namespace: string, name: string, data: Record<string, string>, resourceVersion: string | undefined): Promise<V1ConfigMap> {
    const body: V1ConfigMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace, resourceVersion, labels: { "app.kubernetes.io/managed-by": "healthprobe-operator" } },
      data,
    };
    try {
      if (resourceVersion === undefined) {
        return await this.core.createNamespacedConfigMap({ namespace, body, fieldManager: FIELD_MANAGER });
      }
      return await this.core.replaceNamespacedConfigMap({ name, namespace, body, fieldManager: FIELD_MANAGER });
    } catch (err) {
      throw wrap(`writing ConfigMap ${namespace}/${name}`, err);
    }
  }

  /** One key of a Secret, decoded; undefined when the Secret or key is missing. */
  async readSecretKey(namespace: string, name: string, key: string): Promise<Buffer | undefined> {
    try {
      const secret = await this.core.readNamespacedSecret({ name, namespace });
      const b64 = secret.data?.[key];
      return b64 === undefined ? undefined : Buffer.from(b64, "base64");
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      throw wrap(`reading Secret ${namespace}/${name}`, err);
    }
  }
}

function messageOf(err: unknown): string {
  const body = (err as { body?: unknown })?.body;
  if (typeof body === "string") {
    try {
      return String((JSON.parse(body) as { message?: string }).message ?? body);
    } catch {
      return body;
    }
  }
  if (body && typeof body === "object" && "message" in body) return String((body as { message: unknown }).message);
  return err instanceof Error ? err.message : String(err);
}

/** A 404, or a failed uid precondition (409): either way the pod we judged no longer exists. */
function isPodGone(err: unknown): boolean {
  const code = statusCodeOf(err);
  return code === 404 || (code === 409 && /precondition|UID/i.test(messageOf(err)));
}
