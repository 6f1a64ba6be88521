// The leader-election LeaseStore on a real coordination.k8s.io/v1 Lease.
import { V1MicroTime, type CoordinationV1Api, type V1Lease } from "@kubernetes/client-node";
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from "../runtime/leader-election.js";
import { isConflict, isAlreadyExists, isNotFound } from "./kube-errors.js";

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

export function kubeLeaseStore(api: CoordinationV1Api, namespace: string, name: string): LeaseStore {
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
      acquireTime: r.acquireTime !== undefined ? new V1MicroTime(r.acquireTime) : undefined,
      renewTime: r.renewTime !== undefined ? new V1MicroTime(r.renewTime) : undefined,
      leaseTransitions: r.leaseTransitions,
    },
  });

  return {
    async get() {
      try {
        last = await api.readNamespacedLease({ name, namespace });
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
        last = await api.createNamespacedLease({ namespace, body });
        return toRecord(last);
      } catch (err) {
        if (isAlreadyExists(err) || isConflict(err)) throw new LeaseConflictError(`creating ${where}: already exists`, { cause: err });
        throw new Error(`creating ${where}`, { cause: err });
      }
    },
    async update(record) {
      try {
        last = await api.replaceNamespacedLease({ name, namespace, body: toLease(record) });
        return toRecord(last);
      } catch (err) {
        if (isConflict(err)) throw new LeaseConflictError(`updating ${where}: stale resourceVersion`, { cause: err });
        throw new Error(`updating ${where}`, { cause: err });
      }
    },
  };
}
