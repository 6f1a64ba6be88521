// The operator's writes to the cluster, in one place: EndpointSlices, policy status, evictions,
// the pod condition of the readiness gate, the operator-wide ledger ConfigMap, and the Secret
// reads probe headers need. Every call carries
// context in its error; 404 on delete is success; the caller decides what a 409 means.
import { GROUP, PLURAL, VERSION } from "../api/group.js";
import { ALLOWED_POLICIES_ANNOTATION } from "../domain/probe-access.js";
import type { KubeClient } from "./kube-client.js";
import { statusCodeOf } from "./kube-errors.js";
import type { ConfigMapObject, PolicyLedgerBody } from "../controllers/policy-writer.js";

interface ObjectWithMeta {
  metadata?: { name?: string; generateName?: string; namespace?: string; resourceVersion?: string | undefined };
}
interface ConfigMap extends ObjectWithMeta {
  data?: Record<string, string>;
}

const enc = encodeURIComponent;
const slicesPath = (ns: string) => `/apis/discovery.k8s.io/v1/namespaces/${enc(ns)}/endpointslices`;
const corePath = (ns: string, plural: string) => `/api/v1/namespaces/${enc(ns)}/${plural}`;

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

const STRATEGIC_MERGE = "application/strategic-merge-patch+json";

export type EvictionOutcome = { outcome: "evicted" } | { outcome: "gone" } | { outcome: "blocked"; message: string };

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
  constructor(private readonly client: KubeClient) {}

  async createEndpointSlice(slice: object): Promise<ObjectWithMeta> {
    const s = slice as ObjectWithMeta;
    const ns = s.metadata?.namespace ?? "";
    try {
      return await this.client.post(slicesPath(ns), s, { fieldManager: FIELD_MANAGER });
    } catch (err) {
      throw wrap(`creating EndpointSlice ${ns}/${s.metadata?.generateName ?? s.metadata?.name}`, err);
    }
  }

  async replaceEndpointSlice(slice: object): Promise<ObjectWithMeta> {
    const s = slice as ObjectWithMeta;
    const ns = s.metadata?.namespace ?? "";
    const name = s.metadata?.name ?? "";
    try {
      return await this.client.put(`${slicesPath(ns)}/${enc(name)}`, s, { fieldManager: FIELD_MANAGER });
    } catch (err) {
      throw wrap(`updating EndpointSlice ${ns}/${name}`, err);
    }
  }

  async deleteEndpointSlice(namespace: string, name: string): Promise<void> {
    try {
      await this.client.delete(`${slicesPath(namespace)}/${enc(name)}`);
    } catch (err) {
      if (statusCodeOf(err) === 404) return;
      throw wrap(`deleting EndpointSlice ${namespace}/${name}`, err);
    }
  }

  /**
   * Replaces the policy's status with optimistic concurrency (the cached resourceVersion):
   * the ledger in status must never be lost to a concurrent writer, so a 409 surfaces.
   */
  async replacePolicyStatus(
    policy: { metadata: { name: string; namespace: string } },
    status: object,
  ): Promise<{ resourceVersion?: string }> {
    const { name, namespace } = policy.metadata;
    try {
      const path = `/apis/${GROUP}/${VERSION}/namespaces/${enc(namespace)}/${PLURAL}/${enc(name)}/status`;
      const out = await this.client.put<ObjectWithMeta>(path, { ...policy, status }, { fieldManager: FIELD_MANAGER });
      return { resourceVersion: out?.metadata?.resourceVersion };
    } catch (err) {
      throw wrap(`updating status of HealthProbePolicy ${namespace}/${name}`, err);
    }
  }

  /** Evicts through policy/v1 with a uid precondition, so a recreated pod of the same name is never hit. */
  async evictPod(namespace: string, name: string, uid: string): Promise<EvictionOutcome> {
    try {
      await this.client.post(`${corePath(namespace, "pods")}/${enc(name)}/eviction`, {
        apiVersion: "policy/v1",
        kind: "Eviction",
        metadata: { name, namespace },
        deleteOptions: { preconditions: { uid } },
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
      await this.client.delete(`${corePath(namespace, "pods")}/${enc(name)}`, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid },
      });
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
  async patchPodCondition(
    namespace: string,
    name: string,
    uid: string,
    condition: PodConditionPatch,
  ): Promise<"patched" | "gone"> {
    try {
      const body = { metadata: { uid }, status: { conditions: [condition] } };
      await this.client.request("PATCH", `${corePath(namespace, "pods")}/${enc(name)}/status`, {
        body,
        contentType: STRATEGIC_MERGE,
        query: { fieldManager: FIELD_MANAGER },
      });
      return "patched";
    } catch (err) {
      if (statusCodeOf(err) === 404) return "gone";
      throw wrap(`setting condition ${condition.type}=${condition.status} on Pod ${namespace}/${name}`, err);
    }
  }

  async readConfigMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    try {
      return await this.client.get<ConfigMap>(`${corePath(namespace, "configmaps")}/${enc(name)}`);
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      throw wrap(`reading ConfigMap ${namespace}/${name}`, err);
    }
  }

  /** Creates or updates (optimistic concurrency via the given resourceVersion) a ConfigMap's data. */
  async writeConfigMap(
    namespace: string,
    name: string,
    data: Record<string, string>,
    resourceVersion: string | undefined,
  ): Promise<ConfigMap> {
    const labels = { "app.kubernetes.io/managed-by": "healthprobe-operator" };
    return this.putConfigMap({ name, namespace, resourceVersion, labels }, data, "ConfigMap");
  }

  /** Creates (resourceVersion undefined) or replaces at that resourceVersion a policy's ledger ConfigMap. */
  async writePolicyLedger(cm: PolicyLedgerBody, resourceVersion: string | undefined): Promise<ConfigMapObject> {
    const { name, namespace, labels, ownerReferences, data } = cm;
    return this.putConfigMap({ name, namespace, resourceVersion, labels, ownerReferences }, data, "ledger ConfigMap");
  }

  /** One create-or-replace for every ConfigMap the operator owns: a create without a resourceVersion, else a PUT at it. */
  private async putConfigMap<T>(
    metadata: { name: string; namespace: string; resourceVersion: string | undefined } & Record<string, unknown>,
    data: Record<string, string>,
    what: string,
  ): Promise<T> {
    const { name, namespace, resourceVersion } = metadata;
    const body = { apiVersion: "v1", kind: "ConfigMap", metadata, data };
    try {
      // An undefined resourceVersion is left out of the JSON: a create.
      if (resourceVersion === undefined)
        return await this.client.post<T>(corePath(namespace, "configmaps"), body, { fieldManager: FIELD_MANAGER });
      return await this.client.put<T>(`${corePath(namespace, "configmaps")}/${enc(name)}`, body, {
        fieldManager: FIELD_MANAGER,
      });
    } catch (err) {
      throw wrap(`writing ${what} ${namespace}/${name}`, err);
    }
  }

  /** A ConfigMap by name through a list with a field selector: list is what the operator may do there. */
  async findConfigMap(namespace: string, name: string): Promise<ConfigMapObject | undefined> {
    try {
      const list = await this.client.request<{ items?: ConfigMapObject[] }>("GET", corePath(namespace, "configmaps"), {
        query: { fieldSelector: `metadata.name=${name}` },
      });
      return list.items?.[0];
    } catch (err) {
      throw wrap(`reading ConfigMap ${namespace}/${name}`, err);
    }
  }

  /** One key of a Secret, decoded, with its allowed-policies annotation; undefined when the Secret is missing. */
  async readSecretKey(
    namespace: string,
    name: string,
    key: string,
  ): Promise<{ allowedPolicies: string | undefined; value: Buffer | undefined } | { forbidden: string } | undefined> {
    try {
      const secret = await this.client.get<{
        metadata?: { annotations?: Record<string, string> };
        data?: Record<string, string>;
      }>(`${corePath(namespace, "secrets")}/${enc(name)}`);
      const b64 = secret.data?.[key];
      return {
        allowedPolicies: secret.metadata?.annotations?.[ALLOWED_POLICIES_ANNOTATION],
        value: b64 === undefined ? undefined : Buffer.from(b64, "base64"),
      };
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      // Refused by RBAC: the policy's problem to report, not an error to retry with back-off.
      if (statusCodeOf(err) === 403) return { forbidden: messageOf(err) };
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
