// Shard membership on coordination.k8s.io/v1 Leases in the operator's namespace: one shard Lease
// per replica (renewed by that replica only) and one handover marker per namespace whose
// holderIdentity names the namespace's owner ("" when released). Both kinds carry the ring's
// label, so one list each reads the whole ring fresh from the API (never a cache: the planner
// needs every renewal already answered to its holder).
import { hash32 } from "../domain/shard-ring.js";
import type { KubeClient } from "./kube-client.js";
import { isAlreadyExists, isConflict, isNotFound } from "./kube-errors.js";

export const LABEL_SHARD_RING = "healthprobe.io/shard-ring";
/** "member" for a replica's shard Lease, "marker" for a namespace's handover marker. */
export const LABEL_SHARD_KIND = "healthprobe.io/shard-kind";
/** The namespace a marker is about (names are shortened and hashed; this is the full name). */
export const ANNOTATION_SHARD_NAMESPACE = "healthprobe.io/shard-namespace";

export interface ShardLeaseRecord {
  identity: string;
  /** The holder's clock at its last renewal. */
  renewTime: number;
  leaseDurationMs: number;
}

export interface MarkerRecord {
  namespace: string;
  /** "" when released. */
  holder: string;
  resourceVersion: string;
}

export interface ShardStore {
  /** Creates or renews this replica's shard Lease; throws on any failure. */
  renew(identity: string, renewTime: number, leaseDurationMs: number): Promise<void>;
  /** Deletes this replica's shard Lease (a clean stop: the others need not wait for it to expire); gone is success. */
  retire(identity: string): Promise<void>;
  listShards(): Promise<ShardLeaseRecord[]>;
  listMarkers(): Promise<MarkerRecord[]>;
  /**
   * Sets a marker's holder: created when resourceVersion is undefined, else replaced only at that
   * version. The new resourceVersion, or "conflict" when someone else wrote first.
   */
  writeMarker(
    namespace: string,
    holder: string,
    resourceVersion: string | undefined,
  ): Promise<{ resourceVersion: string } | "conflict">;
  /** Deletes a marker, only at that version: "conflict" when someone else wrote first; gone is success. */
  deleteMarker(namespace: string, resourceVersion: string): Promise<"deleted" | "conflict">;
}

interface V1Lease {
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
}

/** RFC 3339 with microseconds, as metav1.MicroTime is written. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, "000Z");
const hex8 = (text: string) => hash32(text).toString(16).padStart(8, "0");

/** A DNS-1123 name part: lowercase alphanumerics and "-", at most max characters, no "-" at either end. */
function namePart(text: string, max: number): string {
  const cleaned = text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .slice(0, max)
    .replace(/^-+|-+$/g, "");
  return cleaned || "x";
}

/** A replica's shard Lease: its identity may hold "_" or be long, so a readable part plus a hash of the whole. */
export function shardLeaseName(ring: string, identity: string): string {
  return `${namePart(ring, 100)}-shard-${namePart(identity, 100)}-${hex8(identity)}`;
}

/** A namespace's handover marker: the namespace (a DNS label already) plus a hash, within 253 characters. */
export function markerLeaseName(ring: string, namespace: string): string {
  return `${namePart(ring, 100)}-ns-${namePart(namespace, 63)}-${hex8(namespace)}`;
}

function millis(t: string | undefined): number | undefined {
  const ms = t === undefined ? NaN : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** A shard Lease without a holder or renewTime is no member (someone else's, or half-written by hand). */
function toShard(l: V1Lease): ShardLeaseRecord[] {
  const renewTime = millis(l.spec?.renewTime);
  const identity = l.spec?.holderIdentity ?? "";
  if (renewTime === undefined || identity === "") return [];
  return [{ identity, renewTime, leaseDurationMs: (l.spec?.leaseDurationSeconds ?? 0) * 1000 }];
}

function toMarker(l: V1Lease): MarkerRecord[] {
  const namespace = l.metadata?.annotations?.[ANNOTATION_SHARD_NAMESPACE];
  const resourceVersion = l.metadata?.resourceVersion;
  if (!namespace || !resourceVersion) return [];
  return [{ namespace, holder: l.spec?.holderIdentity ?? "", resourceVersion }];
}

function memberLease(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  identity: string,
  renewTime: number,
  leaseDurationMs: number,
): V1Lease {
  return {
    metadata: { name, namespace, labels },
    spec: {
      holderIdentity: identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(leaseDurationMs / 1000)),
      renewTime: microTime(renewTime),
    },
  };
}

export function kubeShardStore(client: KubeClient, operatorNamespace: string, ring: string): ShardStore {
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(operatorNamespace)}/leases`;
  const selector = (kind: string) => ({ labelSelector: `${LABEL_SHARD_RING}=${ring},${LABEL_SHARD_KIND}=${kind}` });
  const labels = (kind: string) => ({ [LABEL_SHARD_RING]: ring, [LABEL_SHARD_KIND]: kind });
  // Each renewed Lease's version: renewals are conditional on it, so a Lease someone else
  // replaced is read again rather than overwritten blindly.
  const versions = new Map<string, string | undefined>();

  const putOrCreate = async (name: string, body: V1Lease, resourceVersion: string | undefined): Promise<V1Lease> => {
    if (resourceVersion === undefined) return client.post<V1Lease>(leases, body);
    return client.put<V1Lease>(`${leases}/${encodeURIComponent(name)}`, {
      ...body,
      metadata: { ...body.metadata, resourceVersion },
    });
  };

  const list = async <T>(kind: string, what: string, map: (l: V1Lease) => T[]): Promise<T[]> => {
    try {
      const found = await client.get<{ items?: V1Lease[] }>(leases, selector(kind));
      return (found.items ?? []).flatMap(map);
    } catch (err) {
      throw new Error(what, { cause: err });
    }
  };

  return {
    async renew(identity, renewTime, leaseDurationMs) {
      const name = shardLeaseName(ring, identity);
      const body = memberLease(name, operatorNamespace, labels("member"), identity, renewTime, leaseDurationMs);
      try {
        versions.set(identity, (await putOrCreate(name, body, versions.get(identity))).metadata?.resourceVersion);
      } catch (err) {
        if (isAlreadyExists(err) || isConflict(err)) {
          // Ours from an earlier run of this identity, or changed by hand: take the current version, renew next time.
          const current = await client.get<V1Lease>(`${leases}/${encodeURIComponent(name)}`).catch(() => undefined);
          versions.set(identity, current?.metadata?.resourceVersion);
        }
        // Deleted by hand: created again next time.
        if (isNotFound(err)) versions.delete(identity);
        throw new Error(`renewing shard Lease ${operatorNamespace}/${name}`, { cause: err });
      }
    },
    async retire(identity) {
      const name = shardLeaseName(ring, identity);
      try {
        await client.delete(`${leases}/${encodeURIComponent(name)}`);
      } catch (err) {
        if (!isNotFound(err)) throw new Error(`deleting shard Lease ${operatorNamespace}/${name}`, { cause: err });
      }
      versions.delete(identity);
    },
    listShards: () => list("member", `listing shard Leases in ${operatorNamespace}`, toShard),
    listMarkers: () => list("marker", `listing handover markers in ${operatorNamespace}`, toMarker),
    deleteMarker: (namespace, resourceVersion) =>
      deleteMarkerLease(client, leases, operatorNamespace, markerLeaseName(ring, namespace), resourceVersion),
    async writeMarker(namespace, holder, resourceVersion) {
      const name = markerLeaseName(ring, namespace);
      const body: V1Lease = {
        metadata: {
          name,
          namespace: operatorNamespace,
          labels: labels("marker"),
          annotations: { [ANNOTATION_SHARD_NAMESPACE]: namespace },
        },
        spec: { holderIdentity: holder },
      };
      try {
        const written = await putOrCreate(name, body, resourceVersion);
        return { resourceVersion: written.metadata?.resourceVersion ?? "" };
      } catch (err) {
        if (isConflict(err) || isAlreadyExists(err)) return "conflict";
        throw new Error(
          `writing handover marker ${operatorNamespace}/${name} (namespace ${namespace}, holder ${JSON.stringify(holder)})`,
          { cause: err },
        );
      }
    },
  };
}

/** Deletes a marker Lease at that version only; gone is success. */
async function deleteMarkerLease(
  client: KubeClient,
  leases: string,
  operatorNamespace: string,
  name: string,
  resourceVersion: string,
): Promise<"deleted" | "conflict"> {
  try {
    await client.delete(`${leases}/${encodeURIComponent(name)}`, {
      apiVersion: "v1",
      kind: "DeleteOptions",
      preconditions: { resourceVersion },
    });
    return "deleted";
  } catch (err) {
    if (isNotFound(err)) return "deleted";
    if (isConflict(err)) return "conflict";
    throw new Error(`deleting handover marker ${operatorNamespace}/${name}`, { cause: err });
  }
}
