// The port every controller part writes through (the ClusterWriter adapter in production), and
// what a 409 from an optimistic write means to them: the cache is behind, reconcile again.
import type { EvictionOutcome, PodConditionPatch } from "../adapters/cluster-writer.js";

export interface PolicyWriter {
  createEndpointSlice(slice: object): Promise<unknown>;
  replaceEndpointSlice(slice: object): Promise<unknown>;
  deleteEndpointSlice(namespace: string, name: string): Promise<void>;
  replacePolicyStatus(
    policy: { metadata: { name: string; namespace: string; resourceVersion?: string } },
    status: object,
  ): Promise<{ resourceVersion?: string | undefined }>;
  evictPod(namespace: string, name: string, uid: string): Promise<EvictionOutcome>;
  deletePod(namespace: string, name: string, uid: string): Promise<EvictionOutcome>;
  patchPodCondition(
    namespace: string,
    name: string,
    uid: string,
    condition: PodConditionPatch,
  ): Promise<"patched" | "gone">;
  readConfigMap(
    namespace: string,
    name: string,
  ): Promise<{ metadata?: { resourceVersion?: string }; data?: Record<string, string> } | undefined>;
  writeConfigMap(
    namespace: string,
    name: string,
    data: Record<string, string>,
    resourceVersion: string | undefined,
  ): Promise<unknown>;
  /** Creates (resourceVersion undefined) or replaces at that resourceVersion a policy's ledger ConfigMap, whole. */
  writePolicyLedger(cm: PolicyLedgerBody, resourceVersion: string | undefined): Promise<ConfigMapObject>;
  /** A ConfigMap by name, through a list (in the policies' namespaces the operator lists ConfigMaps, it gets none). */
  findConfigMap(namespace: string, name: string): Promise<ConfigMapObject | undefined>;
  /** The Secret's allowed-policies annotation and one key's value; undefined when the Secret is missing; forbidden when the API server refuses the read (403). */
  readSecretKey(namespace: string, name: string, key: string): Promise<SecretKeyRead | SecretForbidden | undefined>;
}

/** A policy's ledger ConfigMap as written (policy-ledger.ts). */
export interface PolicyLedgerBody {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  ownerReferences: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller: boolean }>;
  data: Record<string, string>;
}

export interface ConfigMapObject {
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ apiVersion?: string; kind?: string; name?: string; uid?: string }>;
  };
  data?: Record<string, string>;
}

/** A Secret read the API server refused (403): the operator may not get secrets there. */
export interface SecretForbidden {
  /** The server's message (names the user and the namespace; never a value). */
  forbidden: string;
}

export interface SecretKeyRead {
  /** The healthprobe.io/allowed-policies annotation, when set (nothing else of the metadata is kept). */
  allowedPolicies: string | undefined;
  /** The key's decoded value; undefined when the key is missing. */
  value: Uint8Array | undefined;
}

/** A 409 from an optimistic write: the cache is behind; reconcile again soon. */
export class StaleCacheError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StaleCacheError";
  }
}

export async function conflictIsStale<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if ((err as { code?: number }).code === 409)
      throw new StaleCacheError("write conflicted with a newer object; requeue", { cause: err });
    throw err;
  }
}

export function metadataOf(
  o: unknown,
): { name?: string; resourceVersion?: string; generation?: number; uid?: string } | undefined {
  return (
    o as { metadata?: { name?: string; resourceVersion?: string; generation?: number; uid?: string } } | undefined
  )?.metadata;
}
