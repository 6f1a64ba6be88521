// An in-memory PolicyWriter for unit tests: it keeps what was written, assigns resourceVersions
// (opaque strings) and EndpointSlice generations as the API server does, answers a write with a
// stale resourceVersion with a 409, and can be told to fail a call or to pause it mid-flight.
import type { EvictionOutcome, PodConditionPatch } from "../../adapters/cluster-writer.js";
import type {
  ConfigMapObject,
  PolicyLedgerBody,
  PolicyWriter,
  SecretForbidden,
  SecretKeyRead,
} from "../policy-writer.js";

type Meta = { name?: string; generateName?: string; namespace?: string; resourceVersion?: string; generation?: number };
type Obj = { metadata?: Meta; [k: string]: unknown };

export class ConflictError extends Error {
  readonly code = 409;
}

export class NotFoundError extends Error {
  readonly code = 404;
}

export class MemoryWriter implements PolicyWriter {
  /** Every call, in order: "create slice-1", "evict ns/pod", "status ns/web", ... */
  readonly calls: string[] = [];
  readonly slices = new Map<string, Obj>();
  readonly statuses = new Map<string, { resourceVersion: string; status: object }>();
  readonly configMaps = new Map<string, { resourceVersion: string; data: Record<string, string> }>();
  /** ConfigMaps in the policies' namespaces (the policies' ledgers), whole, by "namespace/name". */
  readonly ledgers = new Map<string, ConfigMapObject>();
  /** Secret values by "namespace/name/key". */
  readonly secrets = new Map<string, Uint8Array>();
  /** The healthprobe.io/allowed-policies annotation of Secrets, by "namespace/name". */
  readonly secretAllowedPolicies = new Map<string, string>();
  /** Secrets whose reads the API server refuses (403), by "namespace/name". */
  readonly forbiddenSecrets = new Set<string>();
  /** Pod conditions written, by "namespace/name", in order. */
  readonly podConditions = new Map<string, PodConditionPatch[]>();
  /** Pods patchPodCondition answers "gone" for, by "namespace/name". */
  readonly gonePods = new Set<string>();
  evictions: Array<{ namespace: string; name: string; uid: string }> = [];
  /** What evictPod answers. */
  evictionOutcome: EvictionOutcome = { outcome: "evicted" };
  /** Makes the next call whose description starts with the prefix throw. */
  failNext: { prefix: string; error: Error } | undefined;
  private rv = 100;
  private generated = 0;

  async createEndpointSlice(slice: object): Promise<unknown> {
    const s = slice as Obj;
    const name = s.metadata?.name ?? `${s.metadata?.generateName ?? ""}${++this.generated}`;
    this.record(`create ${name}`);
    const out = { ...s, metadata: { ...s.metadata, name, resourceVersion: this.nextRv(), generation: 1 } };
    this.slices.set(name, out);
    return out;
  }

  async replaceEndpointSlice(slice: object): Promise<unknown> {
    const s = slice as Obj;
    const name = s.metadata?.name ?? "";
    this.record(`update ${name}`);
    const old = this.slices.get(name);
    if (
      !old ||
      (s.metadata?.resourceVersion !== undefined && s.metadata.resourceVersion !== old.metadata?.resourceVersion)
    )
      throw new ConflictError(`slice ${name} changed`);
    const out = {
      ...s,
      metadata: { ...s.metadata, resourceVersion: this.nextRv(), generation: (old.metadata?.generation ?? 0) + 1 },
    };
    this.slices.set(name, out);
    return out;
  }

  async deleteEndpointSlice(_namespace: string, name: string): Promise<void> {
    this.record(`delete ${name}`);
    this.slices.delete(name);
  }

  async replacePolicyStatus(
    policy: { metadata: { name: string; namespace: string; resourceVersion?: string } },
    status: object,
  ): Promise<{ resourceVersion?: string }> {
    const key = `${policy.metadata.namespace}/${policy.metadata.name}`;
    this.record(`status ${key}`);
    const current = this.statuses.get(key);
    if (
      current &&
      policy.metadata.resourceVersion !== undefined &&
      policy.metadata.resourceVersion !== current.resourceVersion
    )
      throw new ConflictError(`policy ${key} changed`);
    const resourceVersion = this.nextRv();
    this.statuses.set(key, { resourceVersion, status });
    return { resourceVersion };
  }

  /** Seeds a policy's stored version, as if it had been created at that resourceVersion. */
  seedPolicy(key: string, resourceVersion: string, status: object = {}): void {
    this.statuses.set(key, { resourceVersion, status });
  }

  async evictPod(namespace: string, name: string, uid: string): Promise<EvictionOutcome> {
    this.record(`evict ${namespace}/${name}`);
    if (this.evictionOutcome.outcome !== "blocked") this.evictions.push({ namespace, name, uid });
    return this.evictionOutcome;
  }

  async deletePod(namespace: string, name: string, uid: string): Promise<EvictionOutcome> {
    this.record(`delete-pod ${namespace}/${name}`);
    this.evictions.push({ namespace, name, uid });
    return { outcome: "evicted" };
  }

  async patchPodCondition(
    namespace: string,
    name: string,
    _uid: string,
    condition: PodConditionPatch,
  ): Promise<"patched" | "gone"> {
    const key = `${namespace}/${name}`;
    this.record(`condition ${key} ${condition.type}=${condition.status}`);
    if (this.gonePods.has(key)) return "gone";
    this.podConditions.set(key, [...(this.podConditions.get(key) ?? []), condition]);
    return "patched";
  }

  async readConfigMap(
    namespace: string,
    name: string,
  ): Promise<{ metadata?: { resourceVersion?: string }; data?: Record<string, string> } | undefined> {
    const cm = this.configMaps.get(`${namespace}/${name}`);
    return cm ? { metadata: { resourceVersion: cm.resourceVersion }, data: { ...cm.data } } : undefined;
  }

  async writeConfigMap(
    namespace: string,
    name: string,
    data: Record<string, string>,
    resourceVersion: string | undefined,
  ): Promise<unknown> {
    const key = `${namespace}/${name}`;
    this.record(`configmap ${key}`);
    const current = this.configMaps.get(key);
    if (
      (current === undefined) !== (resourceVersion === undefined) ||
      (current && current.resourceVersion !== resourceVersion)
    )
      throw new ConflictError(`ConfigMap ${key} changed`);
    const rv = this.nextRv();
    this.configMaps.set(key, { resourceVersion: rv, data });
    return { metadata: { resourceVersion: rv } };
  }

  async writePolicyLedger(cm: PolicyLedgerBody, resourceVersion: string | undefined): Promise<ConfigMapObject> {
    const key = `${cm.namespace}/${cm.name}`;
    this.record(`ledger ${key}`);
    const current = this.ledgers.get(key);
    if (current === undefined && resourceVersion !== undefined) throw new NotFoundError(`ConfigMap ${key} not found`);
    if (current !== undefined && current.metadata?.resourceVersion !== resourceVersion)
      throw new ConflictError(current && resourceVersion === undefined ? `ConfigMap ${key} exists` : `${key} changed`);
    const { name, namespace, labels, ownerReferences, data } = cm;
    const out = { metadata: { name, namespace, labels, ownerReferences, resourceVersion: this.nextRv() }, data };
    this.ledgers.set(key, out);
    return structuredClone(out);
  }

  async findConfigMap(namespace: string, name: string): Promise<ConfigMapObject | undefined> {
    this.record(`find ${namespace}/${name}`);
    const cm = this.ledgers.get(`${namespace}/${name}`);
    return cm && structuredClone(cm);
  }

  /** Seeds a ConfigMap in a policy's namespace (a ledger, or a user's of the same name), as if written by someone. */
  seedConfigMap(cm: ConfigMapObject): ConfigMapObject {
    const out = structuredClone(cm);
    out.metadata = { ...out.metadata, resourceVersion: this.nextRv() };
    this.ledgers.set(`${out.metadata.namespace}/${out.metadata.name}`, out);
    return structuredClone(out);
  }

  async readSecretKey(
    namespace: string,
    name: string,
    key: string,
  ): Promise<SecretKeyRead | SecretForbidden | undefined> {
    this.calls.push(`secret ${namespace}/${name}/${key}`);
    if (this.forbiddenSecrets.has(`${namespace}/${name}`))
      return {
        forbidden: `secrets "${name}" is forbidden: User "operator" cannot get resource "secrets" in API group "" in the namespace "${namespace}"`,
      };
    const value = this.secrets.get(`${namespace}/${name}/${key}`);
    const allowedPolicies = this.secretAllowedPolicies.get(`${namespace}/${name}`);
    return value === undefined && allowedPolicies === undefined ? undefined : { allowedPolicies, value };
  }

  private record(call: string): void {
    this.calls.push(call);
    const f = this.failNext;
    if (f && call.startsWith(f.prefix)) {
      this.failNext = undefined;
      throw f.error;
    }
  }

  private nextRv(): string {
    return `rv-${++this.rv}`;
  }
}
