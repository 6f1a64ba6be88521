// The operator's parts when namespaces are sharded across replicas (--shards=on): the membership
// loop on shard Leases, and the gates around the writer, the Event sink, the probe scheduler and
// the reconciles. Built before the controller (it wraps what the controller writes through) and
// bound to the caches and queues once they exist.
import type { EventSink } from "./adapters/event-sink.js";
import type { KubeClient } from "./adapters/kube-client.js";
import { followerOf, isFollowing, type NamespaceFollower } from "./adapters/following-cache.js";
import { kubeShardStore } from "./adapters/shard-lease-store.js";
import type { Caches, Enqueue } from "./controllers/caches.js";
import type { DiagnosticsPort } from "./controllers/diagnostics.js";
import { hasReadinessGate, keyOf } from "./controllers/kube-objects.js";
import type { PolicyWriter } from "./controllers/policy-writer.js";
import {
  fencedEventSink,
  fencedWriter,
  gatedReconcile,
  NotOwnedError,
  ShardedTargets,
  WritesInFlight,
  type TargetSink,
  type WriteFence,
} from "./controllers/shard-gate.js";
import { enqueueNamespace, type WakeQueue } from "./controllers/wake-rules.js";
import type { Clock } from "./runtime/clock.js";
import type { OperatorConfig } from "./runtime/config.js";
import type { HealthStore } from "./runtime/health-store.js";
import type { Logger } from "./runtime/logger.js";
import { registerShardGauges, type OperatorMetrics } from "./runtime/metrics.js";
import { ShardMembership } from "./runtime/shard-membership.js";
import type { ReconcileResult } from "./runtime/work-queue.js";

export interface ShardDeps {
  client: KubeClient;
  identity: string;
  clock: Clock;
  logger: Logger;
  metrics: OperatorMetrics;
}

/** What the running parts are bound to once they exist. */
export interface ShardBinding {
  caches: Caches;
  health: HealthStore;
  managedServices: (namespace: string) => Iterable<{ namespace: string; service: string }>;
  queues: Partial<Record<WakeQueue, Enqueue>>;
}

export interface Shards {
  /** The namespaces acted on now; undefined with shards off. */
  owned(): string[] | undefined;
  writer(inner: PolicyWriter): PolicyWriter;
  eventSink(inner: EventSink): EventSink;
  diagnostics(inner: DiagnosticsPort): DiagnosticsPort;
  targets(inner: TargetSink): TargetSink;
  reconcile(inner: (key: string) => Promise<ReconcileResult>): (key: string) => Promise<ReconcileResult>;
  /** Starts the membership loop (once the caches have synced: it shares out what they hold). */
  start(binding: ShardBinding): void;
  /** Stops acting, hands every namespace back and retires the shard Lease. */
  stop(): Promise<void>;
}

const same = <T>(x: T): T => x;

/** With shards off, every wrapper is the identity and there is no loop: exactly the operator without shards. */
const NO_SHARDS: Shards = {
  owned: () => undefined,
  writer: same,
  eventSink: same,
  diagnostics: same,
  targets: same,
  reconcile: same,
  start: () => undefined,
  stop: async () => undefined,
};

export function createShards(config: OperatorConfig, d: ShardDeps): Shards {
  if (!config.shards.enabled) return NO_SHARDS;
  const writes = new WritesInFlight();
  let binding: ShardBinding | undefined;
  let follower: NamespaceFollower | undefined;
  let targets: ShardedTargets | undefined;
  const s = config.shards;
  const membership = new ShardMembership({
    store: kubeShardStore(d.client, config.operatorNamespace, config.leaderElectionId),
    identity: d.identity,
    clock: d.clock,
    leaseDurationMs: s.leaseDurationMs,
    renewDeadlineMs: s.renewDeadlineMs,
    retryPeriodMs: s.retryPeriodMs,
    skewMarginMs: s.skewMarginMs,
    logger: d.logger,
    namespaces: () => (binding ? namespacesWithWork(binding, follower !== undefined) : []),
    caches: {
      // Only watched namespaces (--namespace): a marker elsewhere is not this operator's to act on.
      follow: (namespaces) =>
        follower?.follow(
          config.namespaces.length > 0 ? new Set(config.namespaces.filter((ns) => namespaces.has(ns))) : namespaces,
        ) ?? Promise.resolve(),
      synced: (ns) => follower?.synced(ns) ?? true,
      idle: (ns) => follower !== undefined && binding !== undefined && !hasWork(binding.caches, ns),
    },
    writesSettled: (ns) => writes.settled(ns),
    onLost: (ns) => {
      targets?.dropNamespace(ns);
      // Its per-policy series are the new owner's to export now.
      for (const p of binding?.caches.policies.list(ns) ?? [])
        void d.metrics.forgetPolicy(keyOf(p)).catch(() => undefined);
    },
    onGained: (ns) => {
      if (!binding) return;
      // Evidence starts afresh in a namespace taken over: no replacement on results from before.
      for (const p of binding.caches.policies.list(ns)) binding.health.restartProbing(keyOf(p), d.clock.now());
      enqueueNamespace(
        { caches: binding.caches, policiesForPod: () => [], managedServices: binding.managedServices },
        binding.queues,
        ns,
      );
    },
  });
  const fence: WriteFence = {
    owner: membership,
    writes,
    operatorWide: (ns, name) => ns === config.operatorNamespace && name === config.ledgerConfigMapName,
  };
  registerShardGauges(d.metrics.registry, {
    identity: d.identity,
    namespacesOwned: () => membership.owned().length,
    targetsOwned: () => targets?.total() ?? 0,
    liveReplicas: () => membership.plan()?.live.length ?? 0,
  });
  return {
    owned: () => membership.owned(),
    writer: (inner) => fencedWriter(inner, fence),
    eventSink: (inner) => fencedEventSink(inner, fence),
    diagnostics: (inner) => fencedDiagnostics(inner, fence),
    targets: (inner) => (targets = new ShardedTargets(inner, membership)),
    reconcile: (inner) => gatedReconcile(inner, membership, s.retryPeriodMs),
    start(b) {
      binding = b;
      const following = Object.values(b.caches).filter(isFollowing);
      if (following.length > 0) follower = followerOf(following);
      membership.start();
    },
    stop: () => membership.stop(),
  };
}

/**
 * The namespaces with something to act on: policies, the slices this operator manages, pods with
 * the readiness gate. With caches that follow the owned namespaces only the policies are seen
 * cluster-wide; the membership then shares out every marked namespace as well, which covers the
 * leftovers of a policy deleted (its namespace had a marker while the policy lived).
 */
function namespacesWithWork(b: ShardBinding, following: boolean): Set<string> {
  const out = new Set<string>();
  const ns = (o: { metadata?: { namespace?: string } }) => o.metadata?.namespace ?? "";
  for (const p of b.caches.policies.list()) out.add(ns(p));
  if (!following) {
    for (const sl of b.caches.slices.list()) out.add(ns(sl));
    for (const p of b.caches.pods.list()) if (hasReadinessGate(p)) out.add(ns(p));
  }
  out.delete("");
  return out;
}

/** Whether anything in the namespace is this operator's to act on: a policy, a slice it manages, a pod with the readiness gate. */
function hasWork(caches: Caches, namespace: string): boolean {
  return (
    caches.policies.list(namespace).length > 0 ||
    caches.slices.list(namespace).length > 0 ||
    caches.pods.list(namespace).some(hasReadinessGate)
  );
}

/** The diagnostics kept before a replacement are writes in the pod's namespace too. */
function fencedDiagnostics(inner: DiagnosticsPort, f: WriteFence): DiagnosticsPort {
  const guard = <T>(ns: string, what: string, write: () => Promise<T>): Promise<T> =>
    f.owner.ownsNamespace(ns) ? f.writes.track(ns, write) : Promise.reject(new NotOwnedError(ns, what));
  return {
    readPod: (ns, name, signal) => inner.readPod(ns, name, signal),
    readLog: (ns, name, container, opts, signal) => inner.readLog(ns, name, container, opts, signal),
    listPodEvents: (ns, uid, signal) => inner.listPodEvents(ns, uid, signal),
    createConfigMap: (ns, cm, signal) =>
      guard(ns, "a diagnostics ConfigMap", () => inner.createConfigMap(ns, cm, signal)),
    deleteConfigMap: (ns, name, uid) =>
      guard(ns, `diagnostics ConfigMap ${name}`, () => inner.deleteConfigMap(ns, name, uid)),
    describeFailure: (err) => inner.describeFailure(err),
  };
}
