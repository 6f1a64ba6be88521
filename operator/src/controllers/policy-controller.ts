// The policy controller: its parts built over the caches and ports, and the informer handlers
// that turn cache changes into policy keys. Service keys go to the ServiceSlices controller's
// own queue, so a policy and a Service of the same name never share a key.
import type { EventInput } from "../adapters/event-recorder.js";
import type { Clock } from "../runtime/clock.js";
import type { HealthStore } from "../runtime/health-store.js";
import type { Logger } from "../runtime/logger.js";
import type { OperatorMetrics } from "../runtime/metrics.js";
import type { ProbeTarget } from "../runtime/probe-scheduler.js";
import type { Caches, Enqueue, WatchedCache } from "./caches.js";
import { Diagnostics, type DiagnosticsPort } from "./diagnostics.js";
import { Endpoints } from "./endpoints.js";
import { GateRelease } from "./gate-release.js";
import type { PolicyObject } from "./kube-objects.js";
import { PolicyReconciler } from "./policy-reconciler.js";
import { PolicyStatusPart } from "./policy-status.js";
import { ReadinessGates } from "./readiness-gates.js";
import type { PolicyWriter } from "./policy-writer.js";
import { ProbeTargets } from "./probe-targets.js";
import { ReplacementController } from "./replacement-controller.js";
import { LedgerStore } from "./replacement-ledgers.js";
import { ReplacementOutcomes } from "./replacement-outcomes.js";
import { Replacer, type Failpoint } from "./replacer.js";
import { Rollouts } from "./rollouts.js";
import { ServiceOwnership } from "./service-ownership.js";
import { ServiceSlices } from "./service-slices.js";
import { StatusVersions } from "./status-versions.js";
import {
  enqueueManagedServices as wakeEnqueueManaged,
  registerWakeRules,
  WAKE_RULES,
  type WakeContext,
} from "./wake-rules.js";

export interface PolicyControllerOptions {
  caches: Caches;
  writer: PolicyWriter;
  /** Pod logs, Events and the diagnostics ConfigMaps kept before a replacement (none kept without it). */
  diagnosticsApi?: DiagnosticsPort | undefined;
  scheduler: {
    setTargets(owner: string, targets: ProbeTarget[]): void;
    probeNow(owner: string, ids: readonly string[]): void;
  };
  health: HealthStore;
  events: { record(input: EventInput): void };
  metrics?: OperatorMetrics | undefined;
  clock: Clock;
  logger: Logger;
  /** Only the leader writes; everyone probes and evaluates, so a takeover starts warm. */
  isLeader: () => boolean;
  maxEndpointsPerSlice?: number;
  maxReplacementsPer12h: number;
  /** One namespace's share of maxReplacementsPer12h; absent: no share. */
  maxReplacementsPer12hPerNamespace?: number | undefined;
  operatorNamespace: string;
  ledgerConfigMapName?: string;
  statusIntervalMs?: number;
  /** With shards on: this replica's identity, for status.shard. */
  shardIdentity?: string | undefined;
  pdbBackoffMs?: number;
  maxPdbBackoffMs?: number;
  secretTtlMs?: number;
  /** --max-probe-timeout, for the status of a policy whose timeoutSeconds it caps. */
  maxProbeTimeoutMs?: number | undefined;
  failpoint?: Failpoint | undefined;
  /** Queues a policy's pass (the replacement controller's outcome changed); absent: nothing is queued. */
  wakePolicy?: ((key: string) => void) | undefined;
}

export interface PolicyController {
  policies: PolicyReconciler;
  replacement: ReplacementController;
  serviceSlices: ServiceSlices;
  gateRelease: GateRelease;
  ledgers: LedgerStore;
  probeTargets: ProbeTargets;
  endpoints: Endpoints;
}

/** Builds the parts; they meet only through the caches, the health store and the API. */
export function buildPolicyController(o: PolicyControllerOptions): PolicyController {
  const { caches, writer, clock, logger, isLeader, metrics } = o;
  const ownership = new ServiceOwnership(caches.policies, caches.services);
  const versions = new StatusVersions(writer, clock, () => metrics?.statusWrites.inc());
  const ledgers = new LedgerStore({
    writer,
    configMaps: caches.ledgers,
    // While a policy has no ledger ConfigMap, status.replacements (newest known) is its baseline.
    statusOf: (p) => versions.read(p).status,
    clock,
    operatorNamespace: o.operatorNamespace,
    maxReplacementsPer12h: o.maxReplacementsPer12h,
    onOperatorRemaining: (n) => metrics?.operatorReplacementBudgetRemaining.set(n),
    ...(o.ledgerConfigMapName ? { configMapName: o.ledgerConfigMapName } : {}),
  });
  const endpoints = new Endpoints({
    slices: caches.slices,
    nodes: caches.nodes,
    writer,
    clock,
    ...(o.maxEndpointsPerSlice ? { maxEndpointsPerSlice: o.maxEndpointsPerSlice } : {}),
  });
  const probeTargets = new ProbeTargets({
    policies: caches.policies,
    pods: caches.pods,
    secrets: writer,
    scheduler: o.scheduler,
    health: o.health,
    clock,
    ...(o.secretTtlMs ? { secretTtlMs: o.secretTtlMs } : {}),
    ...(o.maxProbeTimeoutMs ? { maxProbeTimeoutMs: o.maxProbeTimeoutMs } : {}),
  });
  const diagnostics = o.diagnosticsApi
    ? new Diagnostics({ api: o.diagnosticsApi, configMaps: caches.diagnostics, pods: caches.pods, health: o.health })
    : undefined;
  const replacer = buildReplacer(o, { probeTargets, ledgers, versions, diagnostics });
  const status = new PolicyStatusPart({
    versions,
    events: o.events,
    metrics,
    isLeader,
    shardIdentity: o.shardIdentity,
    ...(o.statusIntervalMs !== undefined ? { statusIntervalMs: o.statusIntervalMs } : {}),
  });
  const gates = new ReadinessGates({ writer, clock });
  const rollouts = new Rollouts({ replicaSets: caches.replicaSets, health: o.health });
  const outcomes = new ReplacementOutcomes(o.wakePolicy);
  const replacement = new ReplacementController({
    ...{ policies: caches.policies, ownership, probeTargets, endpoints, rollouts, outcomes, status, versions },
    ...{ replacer, health: o.health, clock, logger, isLeader },
  });
  const policies = new PolicyReconciler({
    policies: caches.policies,
    services: caches.services,
    builtInSlices: caches.builtInSlices,
    ownership,
    probeTargets,
    endpoints,
    gates,
    replacements: outcomes,
    rollouts,
    diagnostics,
    status,
    health: o.health,
    metrics,
    clock,
    logger,
    isLeader,
  });
  const serviceSlices = new ServiceSlices({ services: caches.services, ownership, endpoints, logger, isLeader });
  const gateRelease = new GateRelease({ policies: caches.policies, pods: caches.pods, gates, logger, isLeader });
  return { policies, replacement, serviceSlices, gateRelease, ledgers, probeTargets, endpoints };
}

/** The replacement part, over the parts it asks: probe targets, ledgers, status versions, diagnostics. */
function buildReplacer(
  o: PolicyControllerOptions,
  parts: {
    probeTargets: ProbeTargets;
    ledgers: LedgerStore;
    versions: StatusVersions;
    diagnostics: Diagnostics | undefined;
  },
): Replacer {
  const { caches } = o;
  const { probeTargets, ledgers, versions, diagnostics } = parts;
  return new Replacer({
    policies: caches.policies,
    pods: caches.pods,
    health: o.health,
    isProbing: (key, uid) => probeTargets.isProbing(key, uid),
    targetsOf: (p) => probeTargets.targetsOf(p.key, p.obj.metadata.namespace, p.spec),
    writer: o.writer,
    ledgers,
    versions,
    clock: o.clock,
    metrics: o.metrics,
    maxReplacementsPer12h: o.maxReplacementsPer12h,
    maxReplacementsPer12hPerNamespace: o.maxReplacementsPer12hPerNamespace,
    failpoint: o.failpoint,
    diagnostics,
    ...(o.pdbBackoffMs ? { pdbBackoffMs: o.pdbBackoffMs } : {}),
    ...(o.maxPdbBackoffMs ? { maxPdbBackoffMs: o.maxPdbBackoffMs } : {}),
  });
}

/** What the wake rules read of the controller's parts. */
function wakeContext(caches: Caches, controller: PolicyController | undefined): WakeContext {
  return {
    caches,
    policiesForPod: (pod) => controller?.probeTargets.policiesForPod(pod) ?? [],
    managedServices: (ns) => controller?.endpoints.managedServices(ns) ?? [],
  };
}

/** Policy keys for every change that can matter to a policy (the rules in wake-rules.ts). */
export function watchForPolicies(caches: Caches, controller: PolicyController, queue: Enqueue): void {
  registerWakeRules(wakeContext(caches, controller), { policy: queue });
}

/** The hand-over rule alone (wake-rules.ts): one ReadinessGate policy's change of holding wakes the others. */
export function watchForGateHandover(policies: WatchedCache<PolicyObject>, queue: Enqueue): void {
  const rules = WAKE_RULES.filter((r) => r.source === "policies" && r.name.includes("other ReadinessGate policies"));
  registerWakeRules(wakeContext({ policies } as Caches, undefined), { policy: queue }, rules);
}

/** Replacement keys for every change of a policy whose status lists a pod awaiting replacement. */
export function watchForReplacement(caches: Caches, controller: PolicyController, queue: Enqueue): void {
  registerWakeRules(wakeContext(caches, controller), { replacement: queue });
}

/** Service keys for every change that can leave a Service's slices unmanaged. */
export function watchForServiceSlices(caches: Caches, controller: PolicyController, queue: Enqueue): void {
  registerWakeRules(wakeContext(caches, controller), { service: queue });
}

/** Namespace keys for every change that can leave a gated pod held by no policy. */
export function watchForGateRelease(caches: Caches, queue: Enqueue): void {
  registerWakeRules(wakeContext(caches, undefined), { namespace: queue });
}

export { enqueueAll, enqueueGatedNamespaces } from "./wake-rules.js";

/** Every Service with slices this operator manages. */
export function enqueueManagedServices(controller: PolicyController, queue: Enqueue): void {
  wakeEnqueueManaged(() => controller.endpoints.managedServices(), queue);
}
