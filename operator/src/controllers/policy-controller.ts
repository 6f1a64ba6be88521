// The policy controller: its parts built over the caches and ports, and the informer handlers
// that turn cache changes into policy keys. Service keys go to the ServiceSlices controller's
// own queue, so a policy and a Service of the same name never share a key.
import type { EventInput } from "../adapters/event-recorder.js";
import { KIND } from "../api/group.js";
import type { Clock } from "../runtime/clock.js";
import type { HealthStore } from "../runtime/health-store.js";
import type { Logger } from "../runtime/logger.js";
import type { OperatorMetrics } from "../runtime/metrics.js";
import type { ProbeTarget } from "../runtime/probe-scheduler.js";
import type { Caches, Enqueue, WatchedCache } from "./caches.js";
import { Diagnostics, type DiagnosticsPort } from "./diagnostics.js";
import { Endpoints } from "./endpoints.js";
import { GateRelease } from "./gate-release.js";
import { holdingOf, isGatePolicy } from "./gate-holders.js";
import { drainMethodOf, hasReadinessGate, keyOf, serviceNameOf, type PolicyObject } from "./kube-objects.js";
import { PolicyReconciler } from "./policy-reconciler.js";
import { PolicyStatusPart } from "./policy-status.js";
import { ReadinessGates } from "./readiness-gates.js";
import type { PolicyWriter } from "./policy-writer.js";
import { ProbeTargets } from "./probe-targets.js";
import { LedgerStore } from "./replacement-ledgers.js";
import { Replacer, type Failpoint } from "./replacer.js";
import { Rollouts } from "./rollouts.js";
import { ServiceOwnership } from "./service-ownership.js";
import { ServiceSlices } from "./service-slices.js";
import { StatusVersions } from "./status-versions.js";

export interface PolicyControllerOptions {
  caches: Caches;
  writer: PolicyWriter;
  /** Pod logs, Events and the diagnostics ConfigMaps kept before a replacement (none kept without it). */
  diagnosticsApi?: DiagnosticsPort | undefined;
  scheduler: { setTargets(owner: string, targets: ProbeTarget[]): void; probeNow(owner: string, ids: readonly string[]): void };
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
  pdbBackoffMs?: number;
  maxPdbBackoffMs?: number;
  secretTtlMs?: number;
  /** --max-probe-timeout, for the status of a policy whose timeoutSeconds it caps. */
  maxProbeTimeoutMs?: number | undefined;
  failpoint?: Failpoint | undefined;
}

export interface PolicyController {
  policies: PolicyReconciler;
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
    versions,
    operatorNamespace: o.operatorNamespace,
    maxReplacementsPer12h: o.maxReplacementsPer12h,
    onOperatorRemaining: (n) => metrics?.operatorReplacementBudgetRemaining.set(n),
    ...(o.ledgerConfigMapName ? { configMapName: o.ledgerConfigMapName } : {}),
  });
  const endpoints = new Endpoints({ slices: caches.slices, nodes: caches.nodes, writer, clock, ...(o.maxEndpointsPerSlice ? { maxEndpointsPerSlice: o.maxEndpointsPerSlice } : {}) });
  const probeTargets = new ProbeTargets({ policies: caches.policies, pods: caches.pods, secrets: writer, scheduler: o.scheduler, health: o.health, clock, ...(o.secretTtlMs ? { secretTtlMs: o.secretTtlMs } : {}), ...(o.maxProbeTimeoutMs ? { maxProbeTimeoutMs: o.maxProbeTimeoutMs } : {}) });
  const diagnostics = o.diagnosticsApi ? new Diagnostics({ api: o.diagnosticsApi, configMaps: caches.diagnostics, pods: caches.pods, health: o.health }) : undefined;
  const replacer = new Replacer({
    policies: caches.policies,
    pods: caches.pods,
    health: o.health,
    isProbing: (key, uid) => probeTargets.isProbing(key, uid),
    targetsOf: (p) => probeTargets.targetsOf(p.key, p.obj.metadata.namespace, p.spec),
    writer,
    ledgers,
    versions,
    clock,
    metrics,
    maxReplacementsPer12h: o.maxReplacementsPer12h,
    maxReplacementsPer12hPerNamespace: o.maxReplacementsPer12hPerNamespace,
    failpoint: o.failpoint,
    diagnostics,
    ...(o.pdbBackoffMs ? { pdbBackoffMs: o.pdbBackoffMs } : {}),
    ...(o.maxPdbBackoffMs ? { maxPdbBackoffMs: o.maxPdbBackoffMs } : {}),
  });
  const status = new PolicyStatusPart({ versions, events: o.events, metrics, isLeader, ...(o.statusIntervalMs ? { statusIntervalMs: o.statusIntervalMs } : {}) });
  const gates = new ReadinessGates({ writer, clock });
  const rollouts = new Rollouts({ replicaSets: caches.replicaSets, health: o.health });
  const policies = new PolicyReconciler({ policies: caches.policies, services: caches.services, builtInSlices: caches.builtInSlices, ownership, probeTargets, endpoints, gates, replacer, rollouts, diagnostics, status, health: o.health, metrics, clock, logger, isLeader });
  const serviceSlices = new ServiceSlices({ services: caches.services, ownership, endpoints, logger, isLeader });
  const gateRelease = new GateRelease({ policies: caches.policies, pods: caches.pods, gates, logger, isLeader });
  return { policies, serviceSlices, gateRelease, ledgers, probeTargets, endpoints };
}

/** Policy keys for every change that can matter to a policy. */
export function watchForPolicies(caches: Caches, controller: PolicyController, queue: Enqueue): void {
  const namingService = (namespace: string, service: string | undefined) =>
    caches.policies.list(namespace).filter((p) => service !== undefined && serviceNameOf(p) === service).map(keyOf);
  // The Service each policy named when last seen: a policy pointed elsewhere (or deleted) frees
  // the old one, and a policy waiting on it as ServiceClaimed may take over now.
  const lastService = new Map<string, string | undefined>();
  caches.policies.onChange((p, type) => {
    const key = keyOf(p);
    const namespace = p.metadata?.namespace ?? "";
    queue.add(key);
    const services = new Set([lastService.get(key), serviceNameOf(p)]);
    if (type === "delete") lastService.delete(key);
    else lastService.set(key, serviceNameOf(p));
    for (const service of services) for (const other of namingService(namespace, service)) queue.add(other);
  });
  watchForGateHandover(caches.policies, queue);
  caches.pods.onChange((pod) => {
    for (const key of controller.probeTargets.policiesForPod(pod)) queue.add(key);
  });
  // A new ReplicaSet or a new revision (a rollback) can make another one the newest; a status
  // update of a scaling ReplicaSet (the slim cache keeps nothing of it) must not scan the pods.
  const revisions = new Map<string, string | undefined>();
  caches.replicaSets.onChange((rs, type) => {
    const uid = rs.metadata?.uid ?? "";
    const revision = rs.metadata?.annotations?.["deployment.kubernetes.io/revision"];
    if (type === "update" && revisions.has(uid) && revisions.get(uid) === revision) return;
    if (type === "delete") revisions.delete(uid);
    else revisions.set(uid, revision);
    for (const pod of caches.pods.list(rs.metadata?.namespace)) {
      if (pod.metadata?.ownerReferences?.some((r) => r.uid === uid)) for (const key of controller.probeTargets.policiesForPod(pod)) queue.add(key);
    }
  });
  caches.services.onChange((svc) => {
    for (const key of namingService(svc.metadata?.namespace ?? "", svc.metadata?.name)) queue.add(key);
  });
  for (const slices of [caches.slices, caches.builtInSlices]) {
    slices.onChange((slice) => {
      for (const key of namingService(slice.metadata?.namespace ?? "", slice.metadata?.labels?.["kubernetes.io/service-name"])) queue.add(key);
    });
  }
  // A diagnostics ConfigMap created or deleted changes its policy's status.diagnostics.
  caches.diagnostics.onChange((cm) => {
    for (const r of cm.metadata?.ownerReferences ?? []) if (r.kind === KIND && r.name) queue.add(`${cm.metadata?.namespace ?? ""}/${r.name}`);
  });
  // Only a zone change matters to the slices; node heartbeats must not wake every policy.
  const lastZones = new Map<string, string | undefined>();
  caches.nodes.onChange((node) => {
    const name = node.metadata?.name ?? "";
    const zone = node.metadata?.labels?.["topology.kubernetes.io/zone"];
    if (lastZones.has(name) && lastZones.get(name) === zone) return;
    lastZones.set(name, zone);
    enqueueAll(caches, queue);
  });
}

/**
 * Which policy holds a gated pod's condition depends on every ReadinessGate policy of the
 * namespace: one that stops holding (deleted, switched, dryRun, unable to probe) or starts hands
 * pods over, and the others must write what it left at once (seed 20536), not at their next
 * change of their own.
 */
export function watchForGateHandover(policies: WatchedCache<PolicyObject>, queue: Enqueue): void {
  onPolicyChangeOf(policies, holdingOf, (p) => {
    const key = keyOf(p);
    for (const other of policies.list(p.metadata?.namespace ?? "")) if (keyOf(other) !== key && isGatePolicy(other)) queue.add(keyOf(other));
  });
}

/**
 * Calls the handler for a policy change only when what `aspect` reads of the policy changed
 * (undefined once it is deleted): a status write, the commonest change by far, must not wake
 * every Service or namespace a policy touches (500 policies writing status would make that
 * quadratic).
 */
function onPolicyChangeOf(policies: WatchedCache<PolicyObject>, aspect: (p: PolicyObject) => string | undefined, handler: (p: PolicyObject) => void): void {
  const last = new Map<string, string | undefined>();
  policies.onChange((p, type) => {
    const key = keyOf(p);
    const now = type === "delete" ? undefined : aspect(p);
    const changed = !last.has(key) || last.get(key) !== now;
    if (type === "delete") last.delete(key);
    else last.set(key, now);
    if (changed) handler(p);
  });
}

/** What Service ownership reads of a policy (service-ownership.ts): the Service it names, its drain method, whether it is deleting, its age. */
function claimOf(p: PolicyObject): string {
  return JSON.stringify([serviceNameOf(p) ?? "", drainMethodOf(p), !!p.metadata?.deletionTimestamp, p.metadata?.creationTimestamp ?? ""]);
}

/** Service keys for every change that can leave a Service's slices unmanaged. */
export function watchForServiceSlices(caches: Caches, controller: PolicyController, queue: Enqueue): void {
  caches.slices.onChange((slice) => {
    const svc = slice.metadata?.labels?.["kubernetes.io/service-name"];
    if (svc) queue.add(`${slice.metadata?.namespace ?? ""}/${svc}`);
  });
  caches.services.onChange((svc) => queue.add(keyOf(svc)));
  // A policy deleted or pointed at another Service leaves the slices of the old one unmanaged.
  onPolicyChangeOf(caches.policies, claimOf, (p) => {
    for (const s of controller.endpoints.managedServices(p.metadata?.namespace ?? "")) queue.add(`${s.namespace}/${s.service}`);
  });
}

/** Namespace keys for every change that can leave a gated pod held by no policy. */
export function watchForGateRelease(caches: Caches, queue: Enqueue): void {
  caches.pods.onChange((pod) => {
    if (hasReadinessGate(pod)) queue.add(pod.metadata?.namespace ?? "");
  });
  // Only a change in which pods a policy holds can leave a gated pod held by none.
  onPolicyChangeOf(caches.policies, holdingOf, (p) => queue.add(p.metadata?.namespace ?? ""));
}

/** Every namespace with a pod that has the readiness gate. */
export function enqueueGatedNamespaces(caches: Caches, queue: Enqueue): void {
  for (const ns of new Set(caches.pods.list().filter(hasReadinessGate).map((p) => p.metadata?.namespace ?? ""))) queue.add(ns);
}

/** Every policy key. */
export function enqueueAll(caches: Caches, queue: Enqueue): void {
  for (const p of caches.policies.list()) queue.add(keyOf(p));
}

/** Every Service with slices this operator manages. */
export function enqueueManagedServices(controller: PolicyController, queue: Enqueue): void {
  for (const s of controller.endpoints.managedServices()) queue.add(`${s.namespace}/${s.service}`);
}
