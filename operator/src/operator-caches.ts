// The operator's watched caches, one per kind the controllers read, each keeping only the fields
// they read.
import type { KubernetesObject } from "./adapters/kube-object.js";
import type { KubeClient } from "./adapters/kube-client.js";
import { startFollowingCache } from "./adapters/following-cache.js";
import { startWatchedCache, startWatchedCacheIn, type WatchedInformer } from "./adapters/watched-cache.js";
import { GROUP, PLURAL, VERSION } from "./api/group.js";
import type { Caches } from "./controllers/caches.js";
import {
  slimDiagnosticsConfigMap,
  slimNode,
  slimPod,
  slimReplicaSet,
  slimService,
  withoutManagedFields,
  type KubeObject,
  type PodObject,
  type PolicyObject,
  type ServiceObject,
} from "./controllers/kube-objects.js";
import { BUILT_IN_MANAGED_BY, slimBuiltInSlice } from "./controllers/service-endpoints.js";
import { LABEL_POLICY } from "./domain/diagnostics.js";
import { POLICY_LEDGER_SELECTOR } from "./domain/policy-ledger.js";
import { LABEL_MANAGED_BY, MANAGED_BY_OPERATOR } from "./domain/endpoint-slice-types.js";
import type { Clock } from "./runtime/clock.js";
import type { OperatorConfig } from "./runtime/config.js";
import type { Logger } from "./runtime/logger.js";

export type CacheSet = {
  [K in keyof Caches]: WatchedInformer<
    Caches[K] extends { get(ns: string | undefined, n: string): infer T | undefined } ? T & KubernetesObject : never
  >;
};

export function startCaches(config: OperatorConfig, client: KubeClient, logger: Logger, clock: Clock): CacheSet {
  // With watched namespaces, each namespaced kind is one informer per namespace behind one cache.
  const scoped = (group: string, plural: string) => (ns: string | undefined) =>
    ns ? `${group}/namespaces/${ns}/${plural}` : `${group}/${plural}`;
  // Caches keep only what the controllers read (the slim* transforms in kube-objects.ts), as
  // controller-runtime's cache transforms strip managedFields.
  const options = <T extends KubernetesObject>(transform: (obj: T) => T, labelSelector?: string) => ({
    client,
    logger,
    clock,
    transform,
    ...(labelSelector ? { labelSelector } : {}),
  });
  const cache = <T extends KubernetesObject>(
    path: (ns: string | undefined) => string,
    transform: (obj: T) => T,
    labelSelector?: string,
  ): WatchedInformer<T> => startWatchedCacheIn<T>(config.namespaces, path, options(transform, labelSelector));
  // With shards on, the kinds that grow with the pods follow the namespaces this replica owns or
  // is about to (the shard membership starts and drops them, operator-shards.ts): a watch per
  // namespace and kind, so only these. Policies stay whole: they say where the work is.
  const owned = <T extends KubernetesObject>(
    path: (ns: string | undefined) => string,
    transform: (obj: T) => T,
    labelSelector?: string,
  ): WatchedInformer<T> =>
    config.shards.enabled
      ? startFollowingCache<T>(path, options(transform, labelSelector))
      : cache(path, transform, labelSelector);
  return {
    policies: cache<PolicyObject & KubernetesObject>(scoped(`/apis/${GROUP}/${VERSION}`, PLURAL), withoutManagedFields),
    pods: owned<PodObject & KubernetesObject>(
      scoped("/api/v1", "pods"),
      slimPod as (pod: PodObject & KubernetesObject) => PodObject & KubernetesObject,
    ),
    services: cache<ServiceObject & KubernetesObject>(
      scoped("/api/v1", "services"),
      slimService as (svc: ServiceObject & KubernetesObject) => ServiceObject & KubernetesObject,
    ),
    // Cluster-scoped: one informer whatever the watched namespaces.
    nodes: startWatchedCache<KubeObject & KubernetesObject>({
      client,
      path: "/api/v1/nodes",
      logger,
      clock,
      transform: slimNode as (node: KubeObject & KubernetesObject) => KubeObject & KubernetesObject,
    }),
    slices: owned<KubeObject & KubernetesObject>(
      scoped("/apis/discovery.k8s.io/v1", "endpointslices"),
      withoutManagedFields,
      `${LABEL_MANAGED_BY}=${MANAGED_BY_OPERATOR}`,
    ),
    replicaSets: cache<KubeObject & KubernetesObject>(
      scoped("/apis/apps/v1", "replicasets"),
      slimReplicaSet as (rs: KubeObject & KubernetesObject) => KubeObject & KubernetesObject,
    ),
    diagnostics: cache<KubeObject & KubernetesObject>(
      scoped("/api/v1", "configmaps"),
      slimDiagnosticsConfigMap as (cm: KubeObject & KubernetesObject) => KubeObject & KubernetesObject,
      LABEL_POLICY,
    ),
    ledgers: cache<KubeObject & KubernetesObject>(
      scoped("/api/v1", "configmaps"),
      withoutManagedFields,
      POLICY_LEDGER_SELECTOR,
    ),
    builtInSlices: cache<KubeObject & KubernetesObject>(
      scoped("/apis/discovery.k8s.io/v1", "endpointslices"),
      slimBuiltInSlice as (s: KubeObject & KubernetesObject) => KubeObject & KubernetesObject,
      `${LABEL_MANAGED_BY}=${BUILT_IN_MANAGED_BY}`,
    ),
  };
}
