// The operator's work queues, one per kind of key, the cache handlers that feed them, and the
// workers that drain them once every cache has synced.
import { waitForCacheSync } from "./adapters/informer.js";
import type { Caches, Enqueue } from "./controllers/caches.js";
import {
  enqueueAll,
  enqueueGatedNamespaces,
  enqueueManagedServices,
  watchForGateRelease,
  watchForPolicies,
  watchForReplacement,
  watchForServiceSlices,
  type PolicyController,
} from "./controllers/policy-controller.js";
import type { WakeQueue } from "./controllers/wake-rules.js";
import type { Clock } from "./runtime/clock.js";
import type { Logger } from "./runtime/logger.js";
import { controllerMetrics, queueMetrics, type OperatorMetrics } from "./runtime/metrics.js";
import { WorkQueue, runController, type ReconcileResult, type RunningController } from "./runtime/work-queue.js";

/** The controllers, as the queue and reconcile metrics label them. */
const POLICY_CONTROLLER = "policy";
const REPLACEMENT_CONTROLLER = "replacement";
const SERVICE_SLICES_CONTROLLER = "service-slices";
const GATE_RELEASE_CONTROLLER = "gate-release";

export type Queues = {
  policyQueue: WorkQueue;
  replacementQueue: WorkQueue;
  serviceQueue: WorkQueue;
  namespaceQueue: WorkQueue;
};

/** One queue per kind of key: policies, policies awaiting replacement, Services whose slices may be left unmanaged, and namespaces whose gated pods may be held by no policy. */
export function makeQueues(clock: Clock, metrics: OperatorMetrics): Queues {
  return {
    policyQueue: new WorkQueue({ clock, metrics: queueMetrics(metrics, POLICY_CONTROLLER) }),
    replacementQueue: new WorkQueue({ clock, metrics: queueMetrics(metrics, REPLACEMENT_CONTROLLER) }),
    serviceQueue: new WorkQueue({ clock, metrics: queueMetrics(metrics, SERVICE_SLICES_CONTROLLER) }),
    namespaceQueue: new WorkQueue({ clock, metrics: queueMetrics(metrics, GATE_RELEASE_CONTROLLER) }),
  };
}

/** The queues as the wake rules name them. */
export function wakeQueuesOf(q: Queues): Record<WakeQueue, Enqueue> {
  return {
    policy: q.policyQueue,
    replacement: q.replacementQueue,
    service: q.serviceQueue,
    namespace: q.namespaceQueue,
  };
}

/** Registers every cache handler; returns what wakes every key (caches synced, leadership taken). */
export function watchAll(caches: Caches, controller: PolicyController, q: Queues): () => void {
  watchForPolicies(caches, controller, q.policyQueue);
  watchForReplacement(caches, controller, q.replacementQueue);
  watchForServiceSlices(caches, controller, q.serviceQueue);
  watchForGateRelease(caches, q.namespaceQueue);
  return () => {
    enqueueAll(caches, q.policyQueue);
    enqueueAll(caches, q.replacementQueue);
    enqueueManagedServices(controller, q.serviceQueue);
    enqueueGatedNamespaces(caches, q.namespaceQueue);
  };
}

export interface WorkerDeps {
  caches: ReadonlyArray<{ hasSynced(): boolean }>;
  controller: PolicyController;
  policyQueue: WorkQueue;
  replacementQueue: WorkQueue;
  serviceQueue: WorkQueue;
  namespaceQueue: WorkQueue;
  wakeEverything: () => void;
  /** Wraps each reconcile (the shard gate; identity without shards). */
  gate: (reconcile: (key: string) => Promise<ReconcileResult>) => (key: string) => Promise<ReconcileResult>;
  logger: Logger;
  metrics: OperatorMetrics;
  clock: Clock;
  identity: string;
  workers: number;
}

/** Starts the workers after waitForCacheSync; stop() shuts the queues down either way. */
export function startWorkers(d: WorkerDeps): { stop(): Promise<void> } {
  let stopped = false;
  const running: RunningController[] = [];
  const started = (async () => {
    while (!stopped && !(await waitForCacheSync(d.caches, 1_000)));
    if (stopped) return;
    d.logger.info({ identity: d.identity }, "caches synced; reconciling");
    d.wakeEverything();
    await d.controller.ledgers.readOperator(d.logger, d.clock.now());
    if (stopped) return;
    running.push(
      runController({
        queue: d.policyQueue,
        workers: d.workers,
        reconcile: d.gate((key) => d.controller.policies.reconcile(key)),
        logger: d.logger,
        metrics: controllerMetrics(d.metrics, POLICY_CONTROLLER),
        clock: d.clock,
      }),
    );
    running.push(
      runController({
        queue: d.replacementQueue,
        workers: d.workers,
        reconcile: d.gate((key) => d.controller.replacement.reconcile(key)),
        logger: d.logger,
        metrics: controllerMetrics(d.metrics, REPLACEMENT_CONTROLLER),
        clock: d.clock,
      }),
    );
    running.push(
      runController({
        queue: d.serviceQueue,
        workers: 1,
        reconcile: d.gate((key) => d.controller.serviceSlices.reconcile(key)),
        logger: d.logger,
        metrics: controllerMetrics(d.metrics, SERVICE_SLICES_CONTROLLER),
        clock: d.clock,
      }),
    );
    running.push(
      runController({
        queue: d.namespaceQueue,
        workers: 1,
        reconcile: d.gate((key) => d.controller.gateRelease.reconcile(key)),
        logger: d.logger,
        metrics: controllerMetrics(d.metrics, GATE_RELEASE_CONTROLLER),
        clock: d.clock,
      }),
    );
  })();
  return {
    async stop() {
      stopped = true;
      await started;
      if (running.length > 0) await Promise.all(running.map((r) => r.stop()));
      else
        await Promise.all(
          [d.policyQueue, d.replacementQueue, d.serviceQueue, d.namespaceQueue].map((q) => q.shutDown()),
        );
    },
  };
}
