// Wires the operator together: caches, work queue, probe engine, health store, the policy
// controller, leader election, Events, metrics and the health endpoints.
import type { KubernetesObject } from "./adapters/kube-object.js";
import { GROUP, PLURAL, VERSION } from "./api/group.js";
import { LABEL_MANAGED_BY, MANAGED_BY_OPERATOR, LABEL_SERVICE_NAME } from "./domain/endpoint-slice-types.js";
import { ClusterWriter } from "./adapters/cluster-writer.js";
import { EventRecorder, kubeEventSink } from "./adapters/event-recorder.js";
import { createHttpProber } from "./adapters/http-prober.js";
import { startInformer, type Informer } from "./adapters/informer.js";
import { loadKubeConfig, makeApis } from "./adapters/kube-config.js";
import { kubeLeaseStore } from "./adapters/lease-store.js";
import { PolicyController } from "./controllers/policy-controller.js";
import { keyOf, slimNode, slimPod, slimService, withoutManagedFields, type KubeObject, type PodObject, type PolicyObject, type ServiceObject } from "./controllers/kube-objects.js";
import { realClock, type Clock } from "./runtime/clock.js";
import type { OperatorConfig } from "./runtime/config.js";
import { startHealthServer, startMetricsServer, type RunningServer } from "./runtime/health-server.js";
import { HealthStore } from "./runtime/health-store.js";
import { LeaderElector, defaultIdentity } from "./runtime/leader-election.js";
import { createLogger, type Logger } from "./runtime/logger.js";
import { createMetrics, type OperatorMetrics, type ProbeFailureClass } from "./runtime/metrics.js";
import { ProbeScheduler } from "./runtime/probe-scheduler.js";
import { WorkQueue, runController, type RunningController } from "./runtime/work-queue.js";

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
}

export interface RunningOperator {
  identity: string;
  metrics: OperatorMetrics;
  healthPort?: number | undefined;
  metricsPort?: number | undefined;
  isLeader(): boolean;
  isReady(): boolean;
  health: HealthStore;
  /** Stops everything; with leader election, hands the lease over first. */
  stop(): Promise<void>;
}

export async function startOperator(config: OperatorConfig, opts: StartOperatorOptions = {}): Promise<RunningOperator> {
  const logger = opts.logger ?? createLogger({ level: config.logLevel });
  const clock = opts.clock ?? realClock;
  const kcOpts: { kubeconfig?: string; kubeconfigYaml?: string } = {};
  if (opts.kubeconfigYaml !== undefined) kcOpts.kubeconfigYaml = opts.kubeconfigYaml;
  else if (config.kubeconfig) kcOpts.kubeconfig = config.kubeconfig;
  const kc = loadKubeConfig(kcOpts);
  const apis = makeApis(kc);
  const metrics = createMetrics();
  const identity = opts.identity ?? defaultIdentity();
  const queue = new WorkQueue({ clock, metrics: { adds: metrics.workqueueAdds, depth: metrics.workqueueDepth } });
  const health = new HealthStore();

  // Only the leader writes; without leader election this replica always is.
  let elector: LeaderElector | undefined;
  const isLeader = () => (elector ? elector.isLeader() : true);

  const events = new EventRecorder({ sink: kubeEventSink(apis.events), identity, clock, logger, metrics, writable: !config.leaderElect });
  const scheduler = new ProbeScheduler({
    execute: createHttpProber(),
    maxConcurrent: config.maxConcurrentProbes,
    clock,
    onResult: (owner, targetId, outcome) => {
      metrics.recordProbe(owner, outcome.success ? { ok: true } : { ok: false, class: failureClassOf(outcome.failureClass) }, outcome.latencyMs / 1000);
      if (health.record(owner, targetId, outcome)) queue.add(owner);
    },
  });

  const ns = config.namespace;
  const scoped = (group: string, plural: string) => (ns ? `${group}/namespaces/${ns}/${plural}` : `${group}/${plural}`);
  // Caches keep only what the controllers read (see the slim* transforms in kube-objects.ts).
  const inf = <T extends KubernetesObject>(path: string, onEvent: (obj: T) => void, labelSelector?: string, transform: (obj: T) => T = withoutManagedFields): Informer<T> => {
    const o: Parameters<typeof startInformer<T>>[0] = { kc, path, logger, clock, transform, onEvent: (_type, obj) => onEvent(obj) };
    if (labelSelector) o.labelSelector = labelSelector;
    return startInformer<T>(o);
  };

  // eslint-disable-next-line prefer-const
  let controller: PolicyController;
  const lastZones = new Map<string, string | undefined>();
  const policies = inf<PolicyObject & KubernetesObject>(scoped(`/apis/${GROUP}/${VERSION}`, PLURAL), (p) => queue.add(keyOf(p)));
  const pods = inf<PodObject & KubernetesObject>(
    scoped("/api/v1", "pods"),
    (pod) => {
      for (const key of controller.policiesForPod(pod)) queue.add(key);
    },
    undefined,
    slimPod as (pod: PodObject & KubernetesObject) => PodObject & KubernetesObject,
  );
  const services = inf<ServiceObject & KubernetesObject>(
    scoped("/api/v1", "services"),
    (svc) => {
      for (const key of controller.policiesForService(svc.metadata?.namespace ?? "", svc.metadata?.name ?? "")) queue.add(key);
    },
    undefined,
    slimService as (svc: ServiceObject & KubernetesObject) => ServiceObject & KubernetesObject,
  );
  const nodes = inf<KubeObject & KubernetesObject>("/api/v1/nodes", (node) => {
    // Only a zone change matters to the slices; node heartbeats must not wake every policy.
    const name = node.metadata?.name ?? "";
    const zone = node.metadata?.labels?.["topology.kubernetes.io/zone"];
    if (lastZones.has(name) && lastZones.get(name) === zone) return;
    lastZones.set(name, zone);
    for (const p of policies.list()) queue.add(keyOf(p));
  }, undefined, slimNode as (node: KubeObject & KubernetesObject) => KubeObject & KubernetesObject);
  const slices = inf<KubeObject & KubernetesObject>(
    scoped("/apis/discovery.k8s.io/v1", "endpointslices"),
    (slice) => {
      const svc = slice.metadata?.labels?.[LABEL_SERVICE_NAME];
      if (svc) for (const key of controller.policiesForService(slice.metadata?.namespace ?? "", svc)) queue.add(key);
      const orphan = controller.orphanKeyForSlice(slice);
      if (orphan) queue.add(orphan);
    },
    `${LABEL_MANAGED_BY}=${MANAGED_BY_OPERATOR}`,
  );
  const informers = [policies, pods, services, nodes, slices];
  const synced = () => informers.every((i) => i.hasSynced());

  controller = new PolicyController({
    policies,
    pods,
    services,
    nodes,
    slices,
    writer: new ClusterWriter(kc),
    scheduler,
    health,
    events,
    metrics,
    clock,
    logger,
    isLeader,
    maxEndpointsPerSlice: config.maxEndpointsPerSlice,
    maxReplacementsPer12h: config.maxReplacementsPer12h,
    operatorNamespace: config.operatorNamespace,
    ledgerConfigMapName: config.ledgerConfigMapName,
    ...(opts.failpoint ? { failpoint: opts.failpoint } : {}),
  });

  const servers: RunningServer[] = [];
  const healthServer = await startHealthServer({ address: config.healthProbeBindAddress, isReady: synced, debugTargets: () => ({ targets: health.debugTargets(), scheduler: scheduler.stats() }) });
  if (healthServer) servers.push(healthServer);
  const metricsServer = await startMetricsServer({ address: config.metricsBindAddress, registry: metrics.registry });
  if (metricsServer) servers.push(metricsServer);

  if (config.leaderElect) {
    const o: ConstructorParameters<typeof LeaderElector>[0] = {
      store: kubeLeaseStore(apis.coordination, config.operatorNamespace, config.leaderElectionId),
      identity,
      clock,
      logger,
      metrics: { leader: metrics.leader },
      onStartedLeading: () => {
        logger.info({ identity }, "started leading");
        events.setWritable(true);
        for (const p of policies.list()) queue.add(keyOf(p));
      },
      onStoppedLeading: () => {
        logger.info({ identity }, "stopped leading");
        events.setWritable(false);
      },
    };
    if (opts.leaseDurationMs) o.leaseDurationMs = opts.leaseDurationMs;
    if (opts.renewDeadlineMs) o.renewDeadlineMs = opts.renewDeadlineMs;
    if (opts.retryPeriodMs) o.retryPeriodMs = opts.retryPeriodMs;
    elector = new LeaderElector(o);
    elector.start();
  } else {
    metrics.leader.set(1);
  }

  // Nothing is decided before every cache is complete: the queue's workers start after sync.
  let running: RunningController | undefined;
  let stopped = false;
  const startWorkers = (async () => {
    while (!synced() && !stopped) await new Promise((r) => setTimeout(r, 20));
    if (stopped) return;
    logger.info({ identity }, "caches synced; reconciling");
    for (const p of policies.list()) queue.add(keyOf(p));
    running = runController({ queue, workers: opts.workers ?? 4, reconcile: (key) => controller.reconcile(key), logger, metrics, clock });
  })();

  return {
    identity,
    metrics,
    healthPort: healthServer?.port,
    metricsPort: metricsServer?.port,
    isLeader,
    isReady: synced,
    health,
    async stop() {
      stopped = true;
      await startWorkers;
      // Fencing first: stop writing, then hand over the lease, then stop reading.
      if (running) await running.stop();
      else await queue.shutDown();
      scheduler.stop();
      await events.stop();
      if (elector) await elector.release();
      await Promise.all(informers.map((i) => i.stop()));
      await Promise.all(servers.map((s) => s.close()));
    },
  };
}

function failureClassOf(failureClass: string): ProbeFailureClass {
  if (failureClass.startsWith("HTTP")) return "http_status";
  if (failureClass.startsWith("connect")) return "connect";
  if (failureClass.startsWith("timeout")) return "timeout";
  if (failureClass.startsWith("TLS")) return "tls";
  if (failureClass.startsWith("body")) return "body";
  if (failureClass.startsWith("redirect")) return "redirect";
  return "other";
}
