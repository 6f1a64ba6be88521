// The shard gate around the controller parts, when namespaces are sharded across replicas: a
// key of a namespace this replica does not own is not reconciled, its policies are not probed,
// and every write for a namespace asks ownsNamespace() at that instant (fencing), so a replica
// that lost a namespace mid-reconcile writes nothing more there. Writes in flight are counted per
// namespace: a release acknowledges only once they are answered.
import type { EventSink } from "../adapters/event-sink.js";
import type { ProbeTarget } from "../runtime/probe-scheduler.js";
import type { ReconcileResult } from "../runtime/work-queue.js";
import type { PolicyWriter } from "./policy-writer.js";

export interface NamespaceOwnership {
  ownsNamespace(namespace: string): boolean;
}

/** A write refused because this replica does not own the namespace now. */
export class NotOwnedError extends Error {
  constructor(
    readonly namespace: string,
    what: string,
  ) {
    super(`not writing ${what}: namespace ${namespace} is not owned by this replica now`);
    this.name = "NotOwnedError";
  }
}

/** Writes in flight per namespace. */
export class WritesInFlight {
  private readonly counts = new Map<string, number>();
  private readonly waiters = new Map<string, Array<() => void>>();

  async track<T>(namespace: string, write: () => Promise<T>): Promise<T> {
    this.counts.set(namespace, (this.counts.get(namespace) ?? 0) + 1);
    try {
      return await write();
    } finally {
      const left = (this.counts.get(namespace) ?? 1) - 1;
      if (left > 0) this.counts.set(namespace, left);
      else {
        this.counts.delete(namespace);
        for (const wake of this.waiters.get(namespace) ?? []) wake();
        this.waiters.delete(namespace);
      }
    }
  }

  inFlight(namespace: string): number {
    return this.counts.get(namespace) ?? 0;
  }

  /** Resolves once no write for the namespace is in flight. */
  settled(namespace: string): Promise<void> {
    if (!this.counts.has(namespace)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(namespace, [...(this.waiters.get(namespace) ?? []), resolve]));
  }
}

export interface WriteFence {
  owner: NamespaceOwnership;
  writes: WritesInFlight;
  /** Operator-wide objects every replica writes (the replacement cap's ledger ConfigMap): never fenced. */
  operatorWide?: (namespace: string, name: string) => boolean;
}

function fenced<T>(f: WriteFence, namespace: string, what: string, write: () => Promise<T>): Promise<T> {
  if (!f.owner.ownsNamespace(namespace)) return Promise.reject(new NotOwnedError(namespace, what));
  return f.writes.track(namespace, write);
}

const nsOf = (o: object) => (o as { metadata?: { namespace?: string } }).metadata?.namespace ?? "";

/** The writer with every write for a namespace fenced; reads pass through. */
export function fencedWriter(inner: PolicyWriter, f: WriteFence): PolicyWriter {
  return {
    createEndpointSlice: (slice) => fenced(f, nsOf(slice), "an EndpointSlice", () => inner.createEndpointSlice(slice)),
    replaceEndpointSlice: (slice) =>
      fenced(f, nsOf(slice), "an EndpointSlice", () => inner.replaceEndpointSlice(slice)),
    deleteEndpointSlice: (ns, name) =>
      fenced(f, ns, `EndpointSlice ${name}`, () => inner.deleteEndpointSlice(ns, name)),
    replacePolicyStatus: (policy, status) =>
      fenced(f, policy.metadata.namespace, `the status of ${policy.metadata.name}`, () =>
        inner.replacePolicyStatus(policy, status),
      ),
    evictPod: (ns, name, uid) => fenced(f, ns, `an eviction of ${name}`, () => inner.evictPod(ns, name, uid)),
    deletePod: (ns, name, uid) => fenced(f, ns, `a deletion of ${name}`, () => inner.deletePod(ns, name, uid)),
    patchPodCondition: (ns, name, uid, condition) =>
      fenced(f, ns, `the condition of pod ${name}`, () => inner.patchPodCondition(ns, name, uid, condition)),
    readConfigMap: (ns, name) => inner.readConfigMap(ns, name),
    writeConfigMap: (ns, name, data, rv) =>
      f.operatorWide?.(ns, name)
        ? inner.writeConfigMap(ns, name, data, rv)
        : fenced(f, ns, `ConfigMap ${name}`, () => inner.writeConfigMap(ns, name, data, rv)),
    // A policy's ledger is in its namespace: fenced like every other write there.
    writePolicyLedger: (cm, rv) =>
      fenced(f, cm.namespace, `ledger ConfigMap ${cm.name}`, () => inner.writePolicyLedger(cm, rv)),
    findConfigMap: (ns, name) => inner.findConfigMap(ns, name),
    readSecretKey: (ns, name, key) => inner.readSecretKey(ns, name, key),
  };
}

/** Events of a namespace not owned now are dropped: the owner reports what it does there. */
export function fencedEventSink(inner: EventSink, f: WriteFence): EventSink {
  return {
    create: (ns, event) =>
      f.owner.ownsNamespace(ns) ? f.writes.track(ns, () => inner.create(ns, event)) : Promise.resolve(),
    patchSeries: (ns, name, series) =>
      f.owner.ownsNamespace(ns) ? f.writes.track(ns, () => inner.patchSeries(ns, name, series)) : Promise.resolve(),
  };
}

export interface TargetSink {
  setTargets(owner: string, targets: ProbeTarget[]): void;
  probeNow(owner: string, ids: readonly string[]): void;
}

/** The probe scheduler as the parts see it: a policy of a namespace not owned probes nothing. Also counts targets per policy. */
export class ShardedTargets implements TargetSink {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly inner: TargetSink,
    private readonly owner: NamespaceOwnership,
  ) {}

  setTargets(policyKey: string, targets: ProbeTarget[]): void {
    const mine = this.owner.ownsNamespace(namespaceOfKey(policyKey));
    const given = mine ? targets : [];
    if (given.length > 0) this.counts.set(policyKey, given.length);
    else this.counts.delete(policyKey);
    this.inner.setTargets(policyKey, given);
  }

  probeNow(policyKey: string, ids: readonly string[]): void {
    if (this.owner.ownsNamespace(namespaceOfKey(policyKey))) this.inner.probeNow(policyKey, ids);
  }

  /** Stops probing every policy of the namespace (it was lost). */
  dropNamespace(namespace: string): void {
    for (const key of [...this.counts.keys()]) if (namespaceOfKey(key) === namespace) this.setTargets(key, []);
  }

  /** Targets probed now, over every policy. */
  total(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }
}

/** "ns/name" → "ns"; a namespace key ("ns") is its own namespace. */
export function namespaceOfKey(key: string): string {
  const i = key.indexOf("/");
  return i < 0 ? key : key.slice(0, i);
}

/**
 * A reconcile that skips keys of namespaces not owned now; a write fenced mid-reconcile ends it
 * quietly with a requeue (by then the key is usually someone else's, and the requeue finds that).
 */
export function gatedReconcile(
  reconcile: (key: string) => Promise<ReconcileResult>,
  owner: NamespaceOwnership,
  requeueAfterMs: number,
): (key: string) => Promise<ReconcileResult> {
  return async (key) => {
    if (!owner.ownsNamespace(namespaceOfKey(key))) return;
    try {
      return await reconcile(key);
    } catch (err) {
      if (err instanceof NotOwnedError || (err as { cause?: unknown }).cause instanceof NotOwnedError)
        return { requeueAfterMs };
      throw err;
    }
  };
}
