// Wires the operator together, part by part: caches, work queues, probe engine, health store, the
// policy controller's parts, leader election, Events, metrics and the health endpoints. Workers
// start once every cache has synced.
import type { KubernetesObject } from "./adapters/kube-object.js";
import { GROUP, PLURAL, VERSION } from "./api/group.js";
import { LABEL_MANAGED_BY, MANAGED_BY_OPERATOR } from "./domain/endpoint-slice-types.js";
import { ClusterWriter } from "./adapters/cluster-writer.js";
import { DiagnosticsApi } from "./adapters/diagnostics-api.js";
import { LABEL_POLICY } from "./domain/diagnostics.js";
import { EventRecorder, kubeEventSink } from "./adapters/event-recorder.js";
import { createProber } from "./adapters/prober.js";
import { waitForCacheSync } from "./adapters/informer.js";
import { KubeClient } from "./adapters/kube-client.js";
import { connectKube } from "./adapters/kube-connection.js";
import { kubeLeaseStore } from "./adapters/lease-store.js";
import { startWatchedCache, startWatchedCacheIn, type WatchedInformer } from "./adapters/watched-cache.js";
import type { Caches } from "./controllers/caches.js";
import { BUILT_IN_MANAGED_BY, slimBuiltInSlice } from "./controllers/service-endpoints.js";
import {
  buildPolicyController,
  enqueueAll,
  enqueueGatedNamespaces,
  enqueueManagedServices,
  watchForGateRelease,
  watchForPolicies,
  watchForServiceSlices,
  type PolicyController,
} from "./controllers/policy-controller.js";
import {
  keyOf,
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
import { realClock, type Clock } from "./runtime/clock.js";
import type { OperatorConfig } from "./runtime/config.js";
import { startHealthServer, startMetricsServer, type RunningServer } from "./runtime/health-server.js";
import { HealthStore } from "./runtime/health-store.js";
import { LeaderElector, defaultIdentity } from "./runtime/leader-election.js";
import { createLogger, type Logger } from "./runtime/logger.js";
import { controllerMetrics, createMetrics, queueMetrics, type OperatorMetrics } from "./runtime/metrics.js";
import { ProbeScheduler } from "./runtime/probe-scheduler.js";
import { WorkQueue, runController, type RunningController } from "./runtime/work-queue.js";
import { startWebhook, type WebhookDeps } from "./webhook.js";
import { endpointGuardOf } from "./endpoint-access.js";
import type { EndpointGuard } from "./runtime/endpoint-guard.js";

/** The controllers, as the queue and reconcile metrics label them. */
const POLICY_CONTROLLER = "policy";
const SERVICE_SLICES_CONTROLLER = "service-slices";
const GATE_RELEASE_CONTROLLER = "gate-release";

export interface StartOperatorOptions {
  /** Kubeconfig content instead of config.kubeconfig (tests). */
  kubeconfigYaml?: string;
  logger?: Logger;
  clock?: Clock;
  identity?: string;
  /** Leader election timings (tests shorten them). */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  workers?: number;
  failpoint?: (point: "after-charge" | "after-evict") => void;
  /** Webhook certificate lifetimes and resync (tests shorten them). */
  webhookCertificate?: WebhookDeps["certificate"];
}

export interface RunningOperator {
  identity: string;
  metrics: OperatorMetrics;
  healthPort?: number | undefined;
  metricsPort?: number | undefined;
  /** The admission webhook's port, when it is enabled. */
  webhookPort?: number | undefined;
  isLeader(): boolean;
  isReady(): boolean;
  health: HealthStore;
  /** Stops everything; with leader election, hands the lease over first. */
  stop(): Promise<void>;
}

type CacheSet = {
  [K in keyof Caches]: WatchedInformer<
    Caches[K] extends { get(ns: string | undefined, n: string): infer T | undefined } ? T & KubernetesObject : never
  >;
};

export async function startOperator(config: OperatorConfig, opts: StartOperatorOptions = {}): Promise<RunningOperator> {
  const logger = opts.logger ?? createLogger({ level: config.logLevel });
  const clock = opts.clock ?? realClock;
  const client = new KubeClient(
    await connectKube(
      opts.kubeconfigYaml !== undefined
        ? { kubeconfigYaml: opts.kubeconfigYaml }
        : config.kubeconfig
          ? { kubeconfig: config.kubeconfig }
          : {},
    ),
  );
  const metrics = createMetrics();
  const identity = opts.identity ?? defaultIdentity();
  const health = new HealthStore();
  const queues = makeQueues(clock, metrics);
  const { policyQueue, serviceQueue, namespaceQueue } = queues;

  // 1. Leadership: only the leader writes; without leader election this replica always is.
  let elector: LeaderElector | undefined;
  const isLeader = () => (elector ? elector.isLeader() : true);
  const events = new EventRecorder({
    sink: kubeEventSink(client),
    identity,
    clock,
    logger,
    metrics,
    writable: !config.leaderElect,
  });

  // 2. The probe engine: each result goes to the health store, and wakes the policy when it changed a verdict.
  const scheduler = new ProbeScheduler({
    // Results carry the operator clock's time: fresh evidence compares them with when probing started.
    execute: createProber({ now: () => clock.now() }),
    maxConcurrent: config.maxConcurrentProbes,
    maxPerNamespace: config.maxProbesInFlightPerNamespace,
    maxTimeoutMs: config.maxProbeTimeoutMs,
    clock,
    onResult: (owner, targetId, outcome) => {
      metrics.recordProbe(
        owner,
        outcome.success ? { ok: true } : { ok: false, class: outcome.failureKind },
        outcome.latencyMs / 1000,
      );
      if (health.record(owner, targetId, outcome)) policyQueue.add(owner);
    },
  });

  // 3. The caches, and the controller parts over them; each registers the handlers it needs.
  const caches = startCaches(config, client, logger, clock);
  const informers = Object.values(caches);
  const synced = () => informers.every((i) => i.hasSynced());
  const {
    maxEndpointsPerSlice,
    maxReplacementsPer12h,
    maxReplacementsPer12hPerNamespace,
    operatorNamespace,
    ledgerConfigMapName,
    maxProbeTimeoutMs,
  } = config;
  const limits = {
    maxEndpointsPerSlice,
    maxReplacementsPer12h,
    maxReplacementsPer12hPerNamespace,
    operatorNamespace,
    ledgerConfigMapName,
    maxProbeTimeoutMs,
    failpoint: opts.failpoint,
  };
  const controller = buildPolicyController({
    caches,
    writer: new ClusterWriter(client),
    diagnosticsApi: new DiagnosticsApi(client),
    scheduler,
    health,
    events,
    metrics,
    clock,
    logger,
    isLeader,
    ...limits,
  });
  const wakeEverything = watchAll(caches, controller, queues);

  // 4. Health and metrics endpoints.
  const guard = endpointGuardOf(config, client, logger, clock);
  const { servers, healthPort, metricsPort } = await startServers(config, {
    synced,
    health,
    scheduler,
    metrics,
    guard,
    policyNamespaces: () => caches.policies.list().map((p) => p.metadata?.namespace ?? ""),
  });
  // The admission webhook, on every replica: it reads the policy cache only.
  const webhook = await startWebhook(config, {
    client,
    policies: caches.policies,
    synced: () => caches.policies.hasSynced(),
    logger,
    clock,
    metrics,
    certificate: opts.webhookCertificate,
  });

  // 5. Leader election: a new leader looks at everything again.
  if (config.leaderElect) {
    // A new leader starts its probing evidence afresh: no replacement on a result from before it led.
    const onStartedLeading = () => {
      for (const p of caches.policies.list()) health.restartProbing(keyOf(p), clock.now());
      wakeEverything();
    };
    elector = startElector(config, opts, { client, identity, clock, logger, metrics, events, onStartedLeading });
  } else {
    metrics.leader.set(1);
  }

  // 6. Workers, once every cache is complete: nothing is decided from a partial cache.
  const workers = startWorkers({
    caches: informers,
    controller,
    policyQueue,
    serviceQueue,
    namespaceQueue,
    wakeEverything,
    logger,
    metrics,
    clock,
    identity,
    workers: opts.workers ?? 4,
  });

  return {
    identity,
    metrics,
    healthPort,
    metricsPort,
    webhookPort: webhook?.port,
    isLeader,
    isReady: synced,
    health,
    async stop() {
      // Fencing first: stop writing, then hand over the lease, then stop reading.
      await workers.stop();
      scheduler.stop();
      await events.stop();
      if (elector) await elector.release();
      await webhook?.stop();
      await Promise.all(informers.map((i) => i.stop()));
      await Promise.all(servers.map((s) => s.close()));
      await client.connection.close();
    },
  };
}

type Queues = { policyQueue: WorkQueue; serviceQueue: WorkQueue; namespaceQueue: WorkQueue };

/** One queue per kind of key: policies, Services whose slices may be left unmanaged, and namespaces whose gated pods may be held by no policy. */
function makeQueues(clock: Clock, metrics: OperatorMetrics): Queues {
  return {
    policyQueue: new WorkQueue({ clock, metrics: queueMetrics(metrics, POLICY_CONTROLLER) }),
    serviceQueue: new WorkQueue({ clock, metrics: queueMetrics(metrics, SERVICE_SLICES_CONTROLLER) }),
    namespaceQueue: new WorkQueue({ clock, metrics: queueMetrics(metrics, GATE_RELEASE_CONTROLLER) }),
  };
}

/** Registers every cache handler; returns what wakes every key (caches synced, leadership taken). */
function watchAll(caches: Caches, controller: PolicyController, q: Queues): () => void {
  watchForPolicies(caches, controller, q.policyQueue);
  watchForServiceSlices(caches, controller, q.serviceQueue);
  watchForGateRelease(caches, q.namespaceQueue);
  return () => {
    enqueueAll(caches, q.policyQueue);
    enqueueManagedServices(controller, q.serviceQueue);
    enqueueGatedNamespaces(caches, q.namespaceQueue);
  };
}

async function startServers(
  config: OperatorConfig,
  d: {
    synced: () => boolean;
    health: HealthStore;
    scheduler: ProbeScheduler;
    metrics: OperatorMetrics;
    guard: EndpointGuard;
    policyNamespaces: () => string[];
  },
): Promise<{ servers: RunningServer[]; healthPort: number | undefined; metricsPort: number | undefined }> {
  const servers: RunningServer[] = [];
  const healthServer = await startHealthServer({
    address: config.healthProbeBindAddress,
    isReady: d.synced,
    debugTargets: () => ({ targets: d.health.debugTargets(), scheduler: d.scheduler.stats() }),
    guard: d.guard,
  });
  if (healthServer) servers.push(healthServer);
  // Each scrape reads the fair slots' use for the namespaces that have policies.
  d.metrics.watchProbesInFlight({ namespaces: d.policyNamespaces, inFlightOf: d.scheduler.inFlightOf });
  const metricsServer = await startMetricsServer({
    address: config.metricsBindAddress,
    registry: d.metrics.registry,
    guard: d.guard,
  });
  if (metricsServer) servers.push(metricsServer);
  return { servers, healthPort: healthServer?.port, metricsPort: metricsServer?.port };
}

function startCaches(config: OperatorConfig, client: KubeClient, logger: Logger, clock: Clock): CacheSet {
  // With watched namespaces, each namespaced kind is one informer per namespace behind one cache.
  const scoped = (group: string, plural: string) => (ns: string | undefined) =>
    ns ? `${group}/namespaces/${ns}/${plural}` : `${group}/${plural}`;
  // Caches keep only what the controllers read (the slim* transforms in kube-objects.ts), as
  // controller-runtime's cache transforms strip managedFields.
  const cache = <T extends KubernetesObject>(
    path: (ns: string | undefined) => string,
    transform: (obj: T) => T,
    labelSelector?: string,
  ) =>
    startWatchedCacheIn<T>(config.namespaces, path, {
      client,
      logger,
      clock,
      transform,
      ...(labelSelector ? { labelSelector } : {}),
    });
  return {
    policies: cache<PolicyObject & KubernetesObject>(scoped(`/apis/${GROUP}/${VERSION}`, PLURAL), withoutManagedFields),
    pods: cache<PodObject & KubernetesObject>(
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
    slices: cache<KubeObject & KubernetesObject>(
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
    builtInSlices: cache<KubeObject & KubernetesObject>(
      scoped("/apis/discovery.k8s.io/v1", "endpointslices"),
      slimBuiltInSlice as (s: KubeObject & KubernetesObject) => KubeObject & KubernetesObject,
      `${LABEL_MANAGED_BY}=${BUILT_IN_MANAGED_BY}`,
    ),
  };
}

interface ElectorDeps {
  client: KubeClient;
  identity: string;
  clock: Clock;
  logger: Logger;
  metrics: OperatorMetrics;
  events: EventRecorder;
  onStartedLeading: () => void;
}

function startElector(config: OperatorConfig, opts: StartOperatorOptions, d: ElectorDeps): LeaderElector {
  const o: ConstructorParameters<typeof LeaderElector>[0] = {
    store: kubeLeaseStore(d.client, config.operatorNamespace, config.leaderElectionId),
    identity: d.identity,
    clock: d.clock,
    logger: d.logger,
    metrics: { leader: d.metrics.leader },
    onStartedLeading: () => {
      d.logger.info({ identity: d.identity }, "started leading");
      d.events.setWritable(true);
      d.onStartedLeading();
    },
    onStoppedLeading: () => {
      d.logger.info({ identity: d.identity }, "stopped leading");
      d.events.setWritable(false);
    },
  };
  if (opts.leaseDurationMs) o.leaseDurationMs = opts.leaseDurationMs;
  if (opts.renewDeadlineMs) o.renewDeadlineMs = opts.renewDeadlineMs;
  if (opts.retryPeriodMs) o.retryPeriodMs = opts.retryPeriodMs;
  const elector = new LeaderElector(o);
  elector.start();
  return elector;
}

interface WorkerDeps {
  caches: ReadonlyArray<{ hasSynced(): boolean }>;
  controller: PolicyController;
  policyQueue: WorkQueue;
  serviceQueue: WorkQueue;
  namespaceQueue: WorkQueue;
  wakeEverything: () => void;
  logger: Logger;
  metrics: OperatorMetrics;
  clock: Clock;
  identity: string;
  workers: number;
}

/** Starts the workers after waitForCacheSync; stop() shuts the queues down either way. */
function startWorkers(d: WorkerDeps): { stop(): Promise<void> } {
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
        reconcile: (key) => d.controller.policies.reconcile(key),
        logger: d.logger,
        metrics: controllerMetrics(d.metrics, POLICY_CONTROLLER),
        clock: d.clock,
      }),
    );
    running.push(
      runController({
        queue: d.serviceQueue,
        workers: 1,
        reconcile: (key) => d.controller.serviceSlices.reconcile(key),
        logger: d.logger,
        metrics: controllerMetrics(d.metrics, SERVICE_SLICES_CONTROLLER),
        clock: d.clock,
      }),
    );
    running.push(
      runController({
        queue: d.namespaceQueue,
        workers: 1,
        reconcile: (key) => d.controller.gateRelease.reconcile(key),
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
      else await Promise.all([d.policyQueue.shutDown(), d.serviceQueue.shutDown(), d.namespaceQueue.shutDown()]);
    },
  };
}
