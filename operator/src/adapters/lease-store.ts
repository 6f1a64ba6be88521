// The leader-election LeaseStore on a real coordination.k8s.io/v1 Lease.
import type { KubeClient } from "./kube-client.js";
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from "../runtime/leader-election.js";
import { isConflict, isAlreadyExists, isNotFound } from "./kube-errors.js";

interface V1Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string | undefined; [k: string]: unknown };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string | undefined;
    renewTime?: string | undefined;
    leaseTransitions?: number;
  };
}

/** RFC 3339 with microseconds, as metav1.MicroTime is written. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, "000Z");

function toMillis(t: unknown): number | undefined {
  if (t === undefined || t === null) return undefined;
  if (t instanceof Date) return t.getTime();
  const ms = Date.parse(String(t));
  return Number.isNaN(ms) ? undefined : ms;
}

function toRecord(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? "",
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: toMillis(spec.acquireTime),
    renewTime: toMillis(spec.renewTime),
    leaseTransitions: spec.leaseTransitions ?? 0,
    resourceVersion: lease.metadata?.resourceVersion,
  };
}

export function kubeLeaseStore(client: KubeClient, namespace: string, name: string): LeaseStore {
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const where = `Lease ${namespace}/${name}`;
  // Labels and annotations others put on the Lease survive our full-object updates.
  let last: V1Lease | undefined;

  const toLease = (r: LeaseRecord): V1Lease => ({
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { ...(last?.metadata ?? {}), name, namespace, resourceVersion: r.resourceVersion },
    spec: {
      holderIdentity: r.holderIdentity,
      leaseDurationSeconds: r.leaseDurationSeconds,
      acquireTime: r.acquireTime !== undefined ? microTime(r.acquireTime) : undefined,
      renewTime: r.renewTime !== undefined ? microTime(r.renewTime) : undefined,
      leaseTransitions: r.leaseTransitions,
    },
  });

  return {
    async get() {
      try {
        last = await client.get<V1Lease>(`${leases}/${encodeURIComponent(name)}`);
        return toRecord(last);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new Error(`reading ${where}`, { cause: err });
      }
    },
    async create(record) {
      try {
        const body = toLease({ ...record, resourceVersion: undefined });
        delete body.metadata!.resourceVersion;
        last = await client.post<V1Lease>(leases, body);
        return toRecord(last);
      } catch (err) {
        if (isAlreadyExists(err) || isConflict(err))
          throw new LeaseConflictError(`creating ${where}: already exists`, { cause: err });
        throw new Error(`creating ${where}`, { cause: err });
      }
    },
    async update(record) {
      try {
        last = await client.put<V1Lease>(`${leases}/${encodeURIComponent(name)}`, toLease(record));
        return toRecord(last);
      } catch (err) {
        if (isConflict(err)) throw new LeaseConflictError(`updating ${where}: stale resourceVersion`, { cause: err });
        throw new Error(`updating ${where}`, { cause: err });
      }
    },
  };
}
