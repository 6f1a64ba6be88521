// Each policy's replacement ledger, in a ConfigMap of its own (domain/policy-ledger.ts), read from
// the label-selected cache and written only by the operator, always conditionally: a create (409
// AlreadyExists: the ConfigMap is read afresh, and the reconcile requeued) or an update at the
// resourceVersion it was read at (409: requeue). Read-your-writes: while the cache still shows the
// version this process wrote over, a read returns what was written, never the older cached ledger.
import { API_VERSION, KIND } from "../api/group.js";
import type { LedgerEntry } from "../domain/budget.js";
import {
  policyLedgerConfigMap,
  policyLedgerName,
  readPolicyLedger,
  type LedgerConfigMapView,
  type LedgerOwner,
} from "../domain/policy-ledger.js";
import type { PolicyStatus } from "../domain/status.js";
import type { Clock } from "../runtime/clock.js";
import { keyOf, type KubeObject, type NamedPolicy, type ObjectCache } from "./kube-objects.js";
import { StaleCacheError, type ConfigMapObject, type PolicyWriter } from "./policy-writer.js";

/** How long a ConfigMap read afresh (after a create found one the cache does not show) stands in for the cache. */
const FOUND_KEEP_MS = 30_000;

/** A policy ledger at one version; entries null when it cannot be read (`problem` says why). */
export interface PolicyLedger {
  policy: NamedPolicy;
  entries: LedgerEntry[] | null;
  problem?: string;
  /** The entries are not (all) in a ConfigMap the policy owns yet: status's baseline, or a deleted namesake's ConfigMap. */
  pending: boolean;
  /** The ConfigMap's resourceVersion, which a write carries; undefined: there is none, a write creates it. */
  resourceVersion: string | undefined;
  /** The cached resourceVersion when this was read: a write of ours supersedes only that one. */
  cachedResourceVersion: string | undefined;
}

interface Known {
  /** The versions this stands in for (the cached one read, and this process's earlier writes): while the cache shows one, this is newer. */
  over: ReadonlySet<string | undefined>;
  cm: ConfigMapObject | undefined;
  /** A fresh read the cache may never show (a ConfigMap without the ledger label) is kept only so long. */
  until?: number;
}

export interface PolicyLedgersOptions {
  /** The policies' ledger ConfigMaps (label-selected). */
  configMaps: ObjectCache<KubeObject>;
  writer: Pick<PolicyWriter, "writePolicyLedger" | "findConfigMap">;
  /** The policy's status as newest known: status.replacements is the baseline while there is no ConfigMap. */
  statusOf: (policy: NamedPolicy) => Partial<PolicyStatus> | undefined;
  clock: Clock;
}

export class PolicyLedgers {
  private readonly known = new Map<string, Known>();

  constructor(private readonly o: PolicyLedgersOptions) {}

  read(policy: NamedPolicy): PolicyLedger {
    const key = keyOf(policy);
    const { namespace } = policy.metadata;
    const name = policyLedgerName(policy.metadata.name);
    const cached = this.o.configMaps.get(namespace, name) as ConfigMapObject | undefined;
    const cachedResourceVersion = cached?.metadata?.resourceVersion;
    let cm = cached;
    const mine = this.known.get(key);
    if (mine && mine.over.has(cachedResourceVersion) && (mine.until === undefined || mine.until > this.o.clock.now()))
      cm = mine.cm;
    else this.known.delete(key);
    const read = readPolicyLedger(cm && viewOf(cm, name), ownerOf(policy), this.o.statusOf(policy)?.replacements);
    const base = { policy, resourceVersion: cm?.metadata?.resourceVersion, cachedResourceVersion };
    return read.ok
      ? { ...base, entries: read.entries, pending: read.pending }
      : { ...base, entries: null, problem: read.error, pending: false };
  }

  /** Writes the entries as the policy's ledger, over exactly the version read; a 409 (or a 404) is a StaleCacheError. */
  async write(ledger: PolicyLedger, entries: readonly LedgerEntry[]): Promise<PolicyLedger> {
    const { policy } = ledger;
    const key = keyOf(policy);
    const body = policyLedgerConfigMap({ ...ownerOf(policy), namespace: policy.metadata.namespace }, entries);
    let out: ConfigMapObject;
    try {
      out = await this.o.writer.writePolicyLedger(body, ledger.resourceVersion);
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === 409 && ledger.resourceVersion === undefined) {
        // AlreadyExists: the cache has not shown it (yet, or ever: a ConfigMap without the label).
        const found = await this.o.writer.findConfigMap(body.namespace, body.name);
        this.known.set(key, {
          over: new Set([ledger.cachedResourceVersion]),
          cm: found,
          until: this.o.clock.now() + FOUND_KEEP_MS,
        });
        throw new StaleCacheError(`ledger ConfigMap ${body.name} exists; read again`, { cause: err });
      }
      if (code === 409 || code === 404) {
        // What this write went over is stale; a newer write of this process's own (another worker's) still stands.
        const mine = this.known.get(key);
        if (code === 404 || mine?.cm?.metadata?.resourceVersion === ledger.resourceVersion) this.known.delete(key);
        throw new StaleCacheError(`ledger ConfigMap ${body.name} changed; requeue`, { cause: err });
      }
      throw err;
    }
    // Written over exactly ledger.resourceVersion: every version it supersedes is older than this one.
    const over = new Set([...(this.known.get(key)?.over ?? []), ledger.cachedResourceVersion, ledger.resourceVersion]);
    this.known.set(key, { over, cm: out });
    return {
      ...ledger,
      entries: [...entries],
      pending: false,
      resourceVersion: out.metadata?.resourceVersion,
    };
  }

  forget(key: string): void {
    this.known.delete(key);
  }
}

function ownerOf(policy: NamedPolicy): LedgerOwner {
  return { apiVersion: API_VERSION, kind: KIND, name: policy.metadata.name, uid: policy.metadata.uid ?? "" };
}

function viewOf(cm: ConfigMapObject, name: string): LedgerConfigMapView {
  return {
    name,
    labels: cm.metadata?.labels,
    ownerReferences: cm.metadata?.ownerReferences ?? [],
    data: cm.data,
  };
}
