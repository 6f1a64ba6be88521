// Wires the operator together, part by part: caches, work queues, probe engine, health store, the
// policy controller's parts, leader election, Events, metrics and the health endpoints. Workers
// start once every cache has synced.
import { ClusterWriter } from "./adapters/cluster-writer.js";
import { DiagnosticsApi } from "./adapters/diagnostics-api.js";
import { EventRecorder, kubeEventSink } from "./adapters/event-recorder.js";
import { createProber } from "./adapters/prober.js";
import { KubeClient } from "./adapters/kube-client.js";
import { connectKube } from "./adapters/kube-connection.js";
import { kubeLeaseStore } from "./adapters/lease-store.js";
import {
  buildPolicyController,
  type PolicyController,
  type PolicyControllerOptions,
} from "./controllers/policy-controller.js";
import { keyOf } from "./controllers/kube-objects.js";
import { realClock, type Clock } from "./runtime/clock.js";
import type { OperatorConfig } from "./runtime/config.js";
import { startHealthServer, startMetricsServer, type RunningServer } from "./runtime/health-server.js";
import { HealthStore } from "./runtime/health-store.js";
import { LeaderElector, defaultIdentity } from "./runtime/leader-election.js";
import { createLogger, type Logger } from "./runtime/logger.js";
import { createMetrics, type OperatorMetrics } from "./runtime/metrics.js";
import { ProbeScheduler, type ProbeSchedulerOptions } from "./runtime/probe-scheduler.js";
import { startWebhook, type WebhookDeps } from "./webhook.js";
import { endpointGuardOf } from "./endpoint-access.js";
import type { EndpointGuard } from "./runtime/endpoint-guard.js";
import { startCaches, type CacheSet } from "./operator-caches.js";
import { makeQueues, startWorkers, wakeQueuesOf, watchAll, type Queues } from "./operator-workers.js";
import { createShards, type Shards } from "./operator-shards.js";

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
  /** With shards on, the namespaces this replica acts on now; undefined otherwise. */
  ownedNamespaces(): string[] | undefined;
  health: HealthStore;
  /** Stops everything; with leader election, hands the lease over first. */
  stop(): Promise<void>;
}

/** What every phase of the start uses. */
interface Base {
  config: OperatorConfig;
  opts: StartOperatorOptions;
  client: KubeClient;
  clock: Clock;
  logger: Logger;
  metrics: OperatorMetrics;
  identity: string;
  health: HealthStore;
}

export async function startOperator(config: OperatorConfig, opts: StartOperatorOptions = {}): Promise<RunningOperator> {
  const logger = opts.logger ?? createLogger({ level: config.logLevel });
  const clock = opts.clock ?? realClock;
  const client = new KubeClient(await connectKube(connectionOf(config, opts)));
  const metrics = createMetrics();
  const identity = opts.identity ?? defaultIdentity();
  const health = new HealthStore();
  const base: Base = { config, opts, client, clock, logger, metrics, identity, health };
  const queues = makeQueues(clock, metrics);

  // 1. Leadership: only the leader writes; without leader election this replica always is. With
  // shards on, every replica writes, each only for the namespaces it owns (the gates of operator-shards.ts).
  let elector: LeaderElector | undefined;
  const isLeader = () => (elector ? elector.isLeader() : true);
  const shards: Shards = createShards(config, { client, identity, clock, logger, metrics });
  const events = new EventRecorder({
    sink: shards.eventSink(kubeEventSink(client)),
    identity,
    clock,
    logger,
    metrics,
    writable: !config.leaderElect,
  });

  // 2. The probe engine: each result goes to the health store, and wakes the policy when it changed a verdict.
  const scheduler = startProbeEngine(base, queues);

  // 3. The caches, and the controller parts over them; each registers the handlers it needs.
  const caches = startCaches(config, client, logger, clock);
  const informers = Object.values(caches);
  const synced = () => informers.every((i) => i.hasSynced());
  const wakePolicy = (key: string) => queues.policyQueue.add(key);
  const controller = startPolicyController(base, caches, shards, { scheduler, events, isLeader, wakePolicy });
  const wakeEverything = watchAll(caches, controller, queues);

  // 4. Health and metrics endpoints, and the admission webhook.
  const endpoints = await startEndpoints(base, { caches, synced, scheduler });

  // 5. Leader election: a new leader looks at everything again, and starts its probing evidence
  // afresh: no replacement on a result from before it led.
  if (config.leaderElect) {
    elector = startElector(base, events, () => {
      for (const p of caches.policies.list()) health.restartProbing(keyOf(p), clock.now());
      wakeEverything();
    });
  } else {
    metrics.leader.set(1);
  }

  // 6. Workers, once every cache is complete: nothing is decided (nor shared out) from a partial cache.
  const workers = startWorkers({
    caches: informers,
    controller,
    ...queues,
    wakeEverything: () => (bindShards(shards, { caches, health, controller, queues }), wakeEverything()),
    gate: shards.reconcile,
    logger,
    metrics,
    clock,
    identity,
    workers: opts.workers ?? 4,
  });

  return {
    identity,
    metrics,
    healthPort: endpoints.healthPort,
    metricsPort: endpoints.metricsPort,
    webhookPort: endpoints.webhookPort,
    isLeader,
    isReady: synced,
    ownedNamespaces: () => shards.owned(),
    health,
    stop: () => stopInOrder({ workers, scheduler, events, elector, shards, endpoints, informers, client }),
  };
}

/** Once the caches are complete, the shard loop starts sharing out namespaces (nothing without shards). */
function bindShards(
  shards: Shards,
  d: { caches: CacheSet; health: HealthStore; controller: PolicyController; queues: Queues },
): void {
  shards.start({
    caches: d.caches,
    health: d.health,
    managedServices: (ns) => d.controller.endpoints.managedServices(ns),
    queues: wakeQueuesOf(d.queues),
  });
}

interface Running {
  workers: { stop(): Promise<void> };
  scheduler: ProbeScheduler;
  events: EventRecorder;
  elector: LeaderElector | undefined;
  shards: Shards;
  endpoints: RunningEndpoints;
  informers: ReadonlyArray<{ stop(): Promise<void> | void }>;
  client: KubeClient;
}

async function stopInOrder(r: Running): Promise<void> {
  // Fencing first: stop writing, then hand over the lease, then stop reading.
  await r.workers.stop();
  r.scheduler.stop();
  await r.events.stop();
  if (r.elector) await r.elector.release();
  await r.shards.stop();
  await r.endpoints.stopWebhook();
  await Promise.all(r.informers.map((i) => i.stop()));
  await r.endpoints.stopServers();
  await r.client.connection.close();
}

function connectionOf(config: OperatorConfig, opts: StartOperatorOptions): Parameters<typeof connectKube>[0] {
  if (opts.kubeconfigYaml !== undefined) return { kubeconfigYaml: opts.kubeconfigYaml };
  return config.kubeconfig ? { kubeconfig: config.kubeconfig } : {};
}

/** The flags the policy controller's parts take as they are. */
function limitsOf(
  config: OperatorConfig,
  opts: StartOperatorOptions,
  identity: string,
): Partial<PolicyControllerOptions> & Pick<PolicyControllerOptions, "maxReplacementsPer12h" | "operatorNamespace"> {
  const {
    maxEndpointsPerSlice,
    maxReplacementsPer12h,
    maxReplacementsPer12hPerNamespace,
    operatorNamespace,
    ledgerConfigMapName,
    maxProbeTimeoutMs,
  } = config;
  return {
    maxEndpointsPerSlice,
    maxReplacementsPer12h,
    maxReplacementsPer12hPerNamespace,
    operatorNamespace,
    ledgerConfigMapName,
    maxProbeTimeoutMs,
    failpoint: opts.failpoint,
    shardIdentity: config.shards.enabled ? identity : undefined,
  };
}

function startProbeEngine(d: Base, queues: Queues): ProbeScheduler {
  return new ProbeScheduler({
    // Results carry the operator clock's time: fresh evidence compares them with when probing started.
    execute: createProber({ now: () => d.clock.now() }),
    maxConcurrent: d.config.maxConcurrentProbes,
    maxPerNamespace: d.config.maxProbesInFlightPerNamespace,
    maxTimeoutMs: d.config.maxProbeTimeoutMs,
    clock: d.clock,
    onResult: recordResult(d, queues),
  });
}

/** A probe result goes to the health store, and queues its policy and its replacement at once when it changed a verdict. */
function recordResult(d: Base, queues: Queues): ProbeSchedulerOptions["onResult"] {
  return (owner, targetId, outcome) => {
    d.metrics.recordProbe(
      owner,
      outcome.success ? { ok: true } : { ok: false, class: outcome.failureKind },
      outcome.latencyMs / 1000,
    );
    const wake = d.health.record(owner, targetId, outcome);
    // Trace and debug lines time the drain path: result, verdict, reconcile, slice write.
    d.logger.trace(
      { policy: owner, uid: targetId, success: outcome.success, finishedAt: outcome.finishedAt },
      "probe result",
    );
    if (!wake) return;
    d.logger.debug(
      { policy: owner, uid: targetId, state: d.health.get(owner, targetId)?.state },
      "verdict changed; policy queued",
    );
    queues.policyQueue.add(owner);
    queues.replacementQueue.add(owner);
  };
}

/** The policy controller's parts over the caches, writing through the cluster client. */
function startPolicyController(
  d: Base,
  caches: CacheSet,
  shards: Shards,
  parts: Pick<PolicyControllerOptions, "scheduler" | "events" | "isLeader" | "wakePolicy">,
): PolicyController {
  return buildPolicyController({
    caches,
    writer: shards.writer(new ClusterWriter(d.client)),
    diagnosticsApi: shards.diagnostics(new DiagnosticsApi(d.client)),
    ...parts,
    scheduler: shards.targets(parts.scheduler),
    health: d.health,
    metrics: d.metrics,
    clock: d.clock,
    logger: d.logger,
    ...limitsOf(d.config, d.opts, d.identity),
  });
}

interface EndpointDeps {
  caches: CacheSet;
  synced: () => boolean;
  scheduler: ProbeScheduler;
}

interface RunningEndpoints {
  healthPort: number | undefined;
  metricsPort: number | undefined;
  webhookPort: number | undefined;
  stopWebhook(): Promise<void>;
  stopServers(): Promise<void>;
}

/** The health and metrics servers, and the admission webhook (on every replica: it reads the policy cache only). */
async function startEndpoints(b: Base, d: EndpointDeps): Promise<RunningEndpoints> {
  const { config, client, logger, clock, metrics } = b;
  const { caches } = d;
  const guard = endpointGuardOf(config, client, logger, clock);
  const { servers, healthPort, metricsPort } = await startServers(config, {
    synced: d.synced,
    health: b.health,
    scheduler: d.scheduler,
    metrics,
    guard,
    policyNamespaces: () => caches.policies.list().map((p) => p.metadata?.namespace ?? ""),
  });
  const webhook = await startWebhook(config, {
    client,
    policies: caches.policies,
    synced: () => caches.policies.hasSynced(),
    logger,
    clock,
    metrics,
    certificate: b.opts.webhookCertificate,
  });
  return {
    healthPort,
    metricsPort,
    webhookPort: webhook?.port,
    stopWebhook: async () => {
      await webhook?.stop();
    },
    stopServers: async () => {
      await Promise.all(servers.map((s) => s.close()));
    },
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

function startElector(d: Base, events: EventRecorder, onStartedLeading: () => void): LeaderElector {
  const { config, opts } = d;
  const o: ConstructorParameters<typeof LeaderElector>[0] = {
    store: kubeLeaseStore(d.client, config.operatorNamespace, config.leaderElectionId),
    identity: d.identity,
    clock: d.clock,
    logger: d.logger,
    metrics: { leader: d.metrics.leader },
    onStartedLeading: () => {
      d.logger.info({ identity: d.identity }, "started leading");
      events.setWritable(true);
      onStartedLeading();
    },
    onStoppedLeading: () => {
      d.logger.info({ identity: d.identity }, "stopped leading");
      events.setWritable(false);
    },
  };
  if (opts.leaseDurationMs) o.leaseDurationMs = opts.leaseDurationMs;
  if (opts.renewDeadlineMs) o.renewDeadlineMs = opts.renewDeadlineMs;
  if (opts.retryPeriodMs) o.retryPeriodMs = opts.retryPeriodMs;
  const elector = new LeaderElector(o);
  elector.start();
  return elector;
}
