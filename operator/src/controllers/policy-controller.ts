// One reconcile per HealthProbePolicy key: everything about a policy (its probe targets, its
// Service's EndpointSlices, its replacements, its status and Events) is decided in one
// level-based pass from the caches, the health store and the clock, then applied. The
// reconcile never looks at which event woke it.
import { parsePolicySpec } from "../api/parse-policy.js";
import type { HealthProbePolicySpec } from "../api/policy-schema.js";
import { parseDuration } from "../api/duration.js";
import { API_VERSION, KIND } from "../api/group.js";
import { planDrain, type DrainPlan } from "../domain/drain.js";
import { planEndpointSlices } from "../domain/endpoint-slice-plan.js";
import type { EndpointSliceObject, SlicePod, SliceService } from "../domain/endpoint-slice-types.js";
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_OPERATOR, DEFAULT_MAX_ENDPOINTS_PER_SLICE } from "../domain/endpoint-slice-types.js";
import { planEvents, type PlannedEvent } from "../domain/events.js";
import { computeHealthSeeds } from "../domain/health-seed.js";
import { matchesLabelSelector } from "../domain/label-selector.js";
import { decodeOperatorLedger, decodePolicyLedger, encodeOperatorLedger, encodePolicyLedger, chargeLedger, refundLedger, planStatusLedger } from "../domain/ledger.js";
import { DAY_MS, TWELVE_HOURS_MS, pruneLedger, computeBudget, computeOperatorBudget, type LedgerEntry } from "../domain/budget.js";
import { planProbe, type SecretRef } from "../domain/probe-plan.js";
import { computeReplaceAfter, planReplacements, type PolicyBudget, type ReplacementCandidate, type ReplacementPlan } from "../domain/replacement.js";
import { computeStatus, statusEqual, type PolicyStatus, type ReadinessInput, type StatusPodInput } from "../domain/status.js";
import type { EvaluationSettings } from "../domain/types.js";
import type { ProbeTarget } from "../runtime/probe-scheduler.js";
import type { HealthStore, HealthTarget } from "../runtime/health-store.js";
import type { Clock } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import { newReconcileId } from "../runtime/logger.js";
import type { OperatorMetrics } from "../runtime/metrics.js";
import type { ReconcileResult } from "../runtime/work-queue.js";
import type { EventInput, ObjectRef } from "../adapters/event-recorder.js";
import type { EvictionOutcome } from "../adapters/cluster-writer.js";
import {
  isKubeletReady,
  keyOf,
  podIPsOf,
  timeOf,
  type KubeObject,
  type ObjectCache,
  type PodObject,
  type PolicyObject,
  type ServiceObject,
} from "./kube-objects.js";

/** What the controller writes through; the ClusterWriter adapter in production. */
export interface PolicyWriter {
  createEndpointSlice(slice: object): Promise<unknown>;
  replaceEndpointSlice(slice: object): Promise<unknown>;
  deleteEndpointSlice(namespace: string, name: string): Promise<void>;
  replacePolicyStatus(policy: { metadata: { name: string; namespace: string } }, status: object): Promise<{ resourceVersion?: string | undefined }>;
  evictPod(namespace: string, name: string, uid: string): Promise<EvictionOutcome>;
  deletePod(namespace: string, name: string, uid: string): Promise<EvictionOutcome>;
  readConfigMap(namespace: string, name: string): Promise<{ metadata?: { resourceVersion?: string }; data?: Record<string, string> } | undefined>;
  writeConfigMap(namespace: string, name: string, data: Record<string, string>, resourceVersion: string | undefined): Promise<unknown>;
  readSecretKey(namespace: string, name: string, key: string): Promise<Uint8Array | undefined>;
}

export interface PolicyControllerOptions {
  policies: ObjectCache<PolicyObject>;
  pods: ObjectCache<PodObject>;
  services: ObjectCache<ServiceObject>;
  nodes: ObjectCache<KubeObject>;
  slices: ObjectCache<KubeObject>;
  writer: PolicyWriter;
  scheduler: { setTargets(owner: string, targets: ProbeTarget[]): void };
  health: HealthStore;
  events: { record(input: EventInput): void };
  metrics?: OperatorMetrics;
  clock: Clock;
  logger: Logger;
  /** Only the leader writes; everyone probes and evaluates, so a takeover starts warm. */
  isLeader: () => boolean;
  maxEndpointsPerSlice?: number;
  maxReplacementsPer12h: number;
  operatorNamespace: string;
  ledgerConfigMapName?: string;
  /** Minimum spacing of status writes per policy. */
  statusIntervalMs?: number;
  /** First wait after a PodDisruptionBudget refusal; doubles per refusal up to maxPdbBackoffMs. */
  pdbBackoffMs?: number;
  maxPdbBackoffMs?: number;
  secretTtlMs?: number;
  /** Crash-safety tests stop the process at these points: after the ledgers are persisted, after the API call. */
  failpoint?: (point: "after-charge" | "after-evict") => void;
}

export const DEFAULT_LEDGER_CONFIGMAP = "healthprobe-operator-ledger";
const ZONE_LABEL = "topology.kubernetes.io/zone";
/** Secrets are read, not watched: a policy waiting for a missing one looks again this often. */
const MISSING_SECRET_RETRY_MS = 5_000;
/** After a restart, the first probes of pods restored from status are spread over this much time at most. */
const RESTORED_FIRST_PROBE_WITHIN_MS = 2_000;

interface ParsedPolicy {
  obj: PolicyObject & { metadata: { name: string; namespace: string } };
  key: string;
  spec: HealthProbePolicySpec;
  afterMs: number;
}

/** A 409 from an optimistic write: the cache is behind; reconcile again soon. */
export class StaleCacheError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StaleCacheError";
  }
}

export class PolicyController {
  private readonly o: PolicyControllerOptions;
  private readonly lastStatusWrite = new Map<string, number>();
  /** Status this process last wrote per policy, so a lagging cache does not re-trigger writes or events. */
  private readonly written = new Map<string, { resourceVersion?: string | undefined; status: PolicyStatus }>();
  private readonly pdbBlocked = new Map<string, { until: number; backoffMs: number }>();
  /** Pods this process removed, by uid, until the cache shows them terminating or gone: a lagging cache must not get them evicted twice. */
  private readonly removed = new Map<string, { namespace: string; name: string }>();
  private readonly secrets = new Map<string, { at: number; value: Uint8Array | undefined }>();
  /**
   * EndpointSlices this process wrote, per policy and slice name, until the cache shows them:
   * a reconcile right after a write plans from what was written, not from a stale copy (which
   * would cost a 409 and a backoff on the drain path).
   */
  private readonly ownSlices = new Map<string, Map<string, OwnSliceWrite>>();
  /** Pod uids each policy selected at its last reconcile, so a relabelled pod wakes its old policy. */
  readonly selected = new Map<string, Set<string>>();

  constructor(opts: PolicyControllerOptions) {
    this.o = opts;
  }

  /** Policy keys that select (or last selected) a pod. */
  policiesForPod(pod: PodObject): string[] {
    const ns = pod.metadata?.namespace ?? "";
    const uid = pod.metadata?.uid ?? "";
    const keys = new Set<string>();
    for (const p of this.o.policies.list(ns)) {
      const sel = (p.spec as { selector?: object } | undefined)?.selector;
      if (sel && matchesLabelSelector(sel, pod.metadata?.labels)) keys.add(keyOf(p));
    }
    for (const [key, uids] of this.selected) if (uids.has(uid)) keys.add(key);
    return [...keys];
  }

  /** Policy keys that name a Service. */
  policiesForService(namespace: string, name: string): string[] {
    return this.o.policies
      .list(namespace)
      .filter((p) => (p.spec as { serviceName?: string } | undefined)?.serviceName === name)
      .map(keyOf);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const log = this.o.logger.child({ policy: key, reconcileId: newReconcileId() });
    const obj = this.o.policies.get(namespace, name);
    if (!obj || obj.metadata?.deletionTimestamp) {
      this.forget(key);
      if (this.o.isLeader()) await this.deleteOrphanedSlices(log, namespace);
      return;
    }
    const now = this.o.clock.now();
    const parsed = parsePolicySpec(obj.spec);
    const policyObj = obj as ParsedPolicy["obj"];
    if (!parsed.ok) {
      this.stopProbing(key);
      return this.writeStatus(log, policyObj, { reason: "InvalidSpec", message: parsed.message }, [], undefined, undefined, now);
    }
    const policy: ParsedPolicy = { obj: policyObj, key, spec: parsed.spec, afterMs: parseDuration(parsed.spec.replacement.after) };

    const service = this.o.services.get(namespace, policy.spec.serviceName);
    const problem = this.serviceProblem(policy, service);
    if (problem) {
      this.stopProbing(key);
      return this.writeStatus(log, policyObj, problem, [], undefined, undefined, now);
    }

    // Targets: selected pods that are Running with a pod IP and not terminating.
    const selectedPods = this.o.pods.list(namespace).filter((p) => matchesLabelSelector(policy.spec.selector, p.metadata?.labels));
    this.selected.set(key, new Set(selectedPods.map((p) => p.metadata?.uid ?? "")));
    const targets = selectedPods.filter(isTarget);

    // Probes first: a Secret that cannot be read stops this policy only, with the field named.
    const probePlan = await this.planProbes(policy, targets);
    if (!probePlan.ok) {
      this.stopProbing(key);
      const result = await this.writeStatus(log, policyObj, { reason: "InvalidSpec", message: `${probePlan.field}: ${probePlan.message}` }, [], undefined, undefined, now);
      // Nothing wakes the policy when the Secret is created: retry, so it heals by itself.
      return { requeueAfterMs: Math.min(result?.requeueAfterMs ?? MISSING_SECRET_RETRY_MS, MISSING_SECRET_RETRY_MS) };
    }
    const settings: EvaluationSettings = evaluationOf(policy.spec);
    const seeds = this.o.health.has(key) ? new Map() : computeHealthSeeds(statusOf(policyObj)?.pods as never);
    // A pod whose state status restored is serving: probe it soon, not a random part of a period away.
    this.o.scheduler.setTargets(key, seeds.size === 0 ? probePlan.targets : probePlan.targets.map((t) => (seeds.has(t.id) ? { ...t, firstWithinMs: RESTORED_FIRST_PROBE_WITHIN_MS } : t)));
    this.o.health.configure(key, settings, targets.map(toHealthTarget), seeds, now);

    const outOfRotation = new Set<string>();
    const slices = this.currentSlices(policy);
    for (const slice of slices) for (const e of slice.endpoints ?? []) if (e.targetRef?.uid && e.conditions?.ready === false) outOfRotation.add(e.targetRef.uid);
    const drain = planDrain({
      targets: targets.map((p) => {
        const h = this.o.health.get(key, uidOf(p));
        const t = { uid: uidOf(p), name: nameOf(p), state: h?.state ?? ("Unknown" as const), kubeletReady: isKubeletReady(p), outOfRotation: outOfRotation.has(uidOf(p)) };
        // Ordered by unhealthySince as status keeps it (whole seconds), so a restarted or new leader,
        // seeded from status, drains the same pods with the same reasons as the replica before it.
        return h?.unhealthySince !== undefined ? { ...t, unhealthySince: Math.floor(h.unhealthySince / 1000) * 1000 } : t;
      }),
      maxUnhealthyPercent: policy.spec.drain.maxUnhealthyPercent,
      drainEnabled: policy.spec.drain.enabled,
      dryRun: policy.spec.dryRun,
    });

    const leader = this.o.isLeader();
    if (leader) await this.applySlices(log, policy, service as ServiceObject, selectedPods, drain, slices);

    // Replacement: the ledgers are charged and persisted before any eviction.
    let ledger = this.policyLedger(policyObj);
    let replacement: ReplacementPlan | undefined;
    if (leader && ledger !== null) {
      const result = await this.replace(log, policy, targets, ledger, now);
      replacement = result.plan;
      ledger = result.ledger;
    }

    const pods: StatusPodInput[] = targets.map((p) => {
      const uid = uidOf(p);
      const h = this.o.health.get(key, uid)!;
      const input: StatusPodInput = { name: nameOf(p), uid, ip: podIPsOf(p)[0] ?? "", health: h };
      const d = drain.decisions.get(uid);
      if (d) input.decision = d;
      if (policy.spec.replacement.enabled && !policy.spec.dryRun && h.state === "Unhealthy") {
        const after = computeReplaceAfter(h.unhealthySince, policy.afterMs);
        if (after !== undefined) input.replaceAfter = after;
      }
      return input;
    });
    this.recordTargetMetrics(key, pods, drain);

    const result = await this.writeStatus(log, policyObj, { reason: "Reconciled" }, pods, drain, ledger !== null ? { ledger, plan: replacement } : undefined, now);
    const requeues = [result?.requeueAfterMs, replacement?.requeueAt !== undefined ? replacement.requeueAt - now : undefined];
    // A Window wait for a pod that is not yet due is also a requeue.
    for (const p of pods) if (p.replaceAfter !== undefined && p.replaceAfter > now) requeues.push(p.replaceAfter - now);
    const delays = requeues.filter((d): d is number => d !== undefined && d >= 0);
    return delays.length > 0 ? { requeueAfterMs: Math.max(1, Math.min(...delays)) } : undefined;
  }

  private forget(key: string): void {
    this.stopProbing(key);
    this.o.health.drop(key);
    this.selected.delete(key);
    this.lastStatusWrite.delete(key);
    this.written.delete(key);
    this.ownSlices.delete(key);
    void this.o.metrics?.forgetPolicy(key);
  }

  /**
   * Slices we wrote for a Service no policy names any more. A selector-less Service gets its
   * endpoints only from whoever writes them; with its policy gone, frozen slices would keep
   * drained pods drained and deleted pods listed forever, so they are removed.
   */
  private async deleteOrphanedSlices(log: Logger, namespace: string): Promise<void> {
    const claimed = new Set(
      this.o.policies
        .list(namespace)
        .filter((p) => !p.metadata?.deletionTimestamp)
        .map((p) => (p.spec as { serviceName?: string } | undefined)?.serviceName),
    );
    for (const slice of this.o.slices.list(namespace)) {
      const labels = slice.metadata?.labels ?? {};
      if (labels[LABEL_MANAGED_BY] !== MANAGED_BY_OPERATOR || claimed.has(labels[LABEL_SERVICE_NAME])) continue;
      await this.o.writer.deleteEndpointSlice(namespace, slice.metadata?.name ?? "");
      log.info({ slice: slice.metadata?.name, service: labels[LABEL_SERVICE_NAME] }, "EndpointSlice deleted: no policy manages its Service");
    }
  }

  /** A key for a slice's namespace when no policy claims its Service, so orphans are collected. */
  orphanKeyForSlice(slice: KubeObject): string | undefined {
    const ns = slice.metadata?.namespace ?? "";
    const svc = slice.metadata?.labels?.[LABEL_SERVICE_NAME];
    if (!svc || this.policiesForService(ns, svc).length > 0) return undefined;
    return `${ns}/${svc}`;
  }

  private stopProbing(key: string): void {
    this.o.scheduler.setTargets(key, []);
    this.selected.delete(key);
  }

  private serviceProblem(policy: ParsedPolicy, service: ServiceObject | undefined): ReadinessInput | undefined {
    const svc = policy.spec.serviceName;
    if (!service) return { reason: "ServiceNotFound", message: `Service ${svc} not found in namespace ${policy.obj.metadata.namespace}` };
    if (service.spec?.selector && Object.keys(service.spec.selector).length > 0) {
      return {
        reason: "ServiceHasSelector",
        message: `Service ${svc} has a selector, so the built-in EndpointSlice controller manages it; remove spec.selector to let this policy write its endpoints`,
      };
    }
    // The oldest policy naming a Service owns it (ties by name): one endpoints controller per Service.
    const mine = [timeOf(policy.obj.metadata.creationTimestamp) ?? 0, policy.obj.metadata.name] as const;
    for (const other of this.o.policies.list(policy.obj.metadata.namespace)) {
      if (other.metadata?.name === policy.obj.metadata.name || other.metadata?.deletionTimestamp) continue;
      if ((other.spec as { serviceName?: string } | undefined)?.serviceName !== svc) continue;
      const theirs = [timeOf(other.metadata?.creationTimestamp) ?? 0, other.metadata?.name ?? ""] as const;
      if (theirs[0] < mine[0] || (theirs[0] === mine[0] && theirs[1] < mine[1])) {
        return { reason: "ServiceClaimed", message: `Service ${svc} is already managed by HealthProbePolicy ${theirs[1]}` };
      }
    }
    return undefined;
  }

  private async planProbes(policy: ParsedPolicy, targets: PodObject[]): Promise<{ ok: true; targets: ProbeTarget[] } | { ok: false; field: string; message: string }> {
    const ns = policy.obj.metadata.namespace;
    const refs: SecretRef[] = [];
    for (const h of policy.spec.probe.headers ?? []) if (h.valueFrom?.secretKeyRef) refs.push(h.valueFrom.secretKeyRef);
    if (policy.spec.probe.signature) refs.push(policy.spec.probe.signature.secretRef);
    const values = new Map<string, Uint8Array | undefined>();
    for (const ref of refs) values.set(`${ref.name}/${ref.key}`, await this.secret(ns, ref));
    const lookup = (ref: SecretRef) => values.get(`${ref.name}/${ref.key}`);

    const out: ProbeTarget[] = [];
    for (const pod of targets) {
      const planned = planProbe(policy.spec.probe, { ip: podIPsOf(pod)[0]!, containers: pod.spec?.containers ?? [] }, lookup);
      if (!planned.ok) {
        // A named port one pod lacks is that pod's problem, not the policy's: it is not probed.
        if (planned.field === "spec.probe.port") continue;
        return planned;
      }
      out.push({ id: uidOf(pod), ...planned.probe });
    }
    return { ok: true, targets: out };
  }

  private async secret(namespace: string, ref: SecretRef): Promise<Uint8Array | undefined> {
    const k = `${namespace}/${ref.name}/${ref.key}`;
    const now = this.o.clock.now();
    const hit = this.secrets.get(k);
    const ttl = this.o.secretTtlMs ?? 60_000;
    if (hit && now - hit.at < (hit.value === undefined ? Math.min(ttl, MISSING_SECRET_RETRY_MS) : ttl)) return hit.value;
    const value = await this.o.writer.readSecretKey(namespace, ref.name, ref.key);
    this.secrets.set(k, { at: now, value });
    return value;
  }

  /** `existing`: the Service's slices as they stand, read once per reconcile (see currentSlices). */
  private async applySlices(log: Logger, policy: ParsedPolicy, service: ServiceObject, selectedPods: PodObject[], drain: DrainPlan, existing: EndpointSliceObject[]): Promise<void> {
    const ns = policy.obj.metadata.namespace;
    const svcName = policy.spec.serviceName;
    const nodeZones: Record<string, string> = {};
    for (const node of this.o.nodes.list()) {
      const zone = node.metadata?.labels?.[ZONE_LABEL];
      if (zone && node.metadata?.name) nodeZones[node.metadata.name] = zone;
    }
    const previous = new Map(((statusOf(policy.obj)?.pods ?? []) as Array<{ uid: string; state: string; drained?: boolean }>).map((p) => [p.uid, p]));
    const sliceService: SliceService = {
      name: svcName,
      namespace: ns,
      uid: service.metadata?.uid ?? "",
      ports: (service.spec?.ports ?? []).map((p) => {
        const port: SliceService["ports"][number] = { port: p.port, protocol: (p.protocol ?? "TCP") as "TCP" };
        if (p.name) port.name = p.name;
        if (p.targetPort !== undefined) port.targetPort = p.targetPort;
        if (p.appProtocol) port.appProtocol = p.appProtocol;
        return port;
      }),
    };
    if (service.spec?.ipFamilies) sliceService.ipFamilies = service.spec.ipFamilies as Array<"IPv4" | "IPv6">;
    const plan = planEndpointSlices({
      service: sliceService,
      pods: selectedPods.map(toSlicePod),
      admitted: (uid) => {
        const d = drain.decisions.get(uid);
        if (d) return d.admitted;
        // Not a target (terminating, not running): keep what it last had, never newly admit.
        const prev = previous.get(uid);
        return prev !== undefined && prev.state === "Healthy" && !prev.drained;
      },
      nodeZones,
      existing,
      maxEndpointsPerSlice: this.o.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE,
    });
    for (const d of plan.delete) {
      await this.o.writer.deleteEndpointSlice(d.namespace, d.name);
      this.rememberSliceWrite(policy.key, d.name, { deleted: true, resourceVersion: existing.find((e) => e.metadata.name === d.name)?.metadata.resourceVersion });
    }
    for (const u of plan.update) {
      const out = await this.conflictIsStale(() => this.o.writer.replaceEndpointSlice(u));
      this.rememberSliceWrite(policy.key, u.metadata.name, { slice: u, resourceVersion: metadataOf(out)?.resourceVersion });
    }
    for (const c of plan.create) {
      const out = metadataOf(await this.o.writer.createEndpointSlice(c));
      if (out?.name) this.rememberSliceWrite(policy.key, out.name, { slice: { ...c, metadata: { ...c.metadata, name: out.name } }, resourceVersion: out.resourceVersion });
    }
    for (const change of plan.changes) log.info({ slice: change.slice, action: change.action, reason: change.reason }, "EndpointSlice written");
  }

  /** The Service's slices this operator manages, as they stand (the cache, with our newer writes). */
  private currentSlices(policy: ParsedPolicy): EndpointSliceObject[] {
    const cached = this.o.slices
      .list(policy.obj.metadata.namespace)
      .filter((s) => s.metadata?.labels?.[LABEL_MANAGED_BY] === MANAGED_BY_OPERATOR && s.metadata?.labels?.[LABEL_SERVICE_NAME] === policy.spec.serviceName) as unknown as EndpointSliceObject[];
    return this.withOwnSliceWrites(policy.key, cached);
  }

  private rememberSliceWrite(key: string, name: string | undefined, write: { slice?: EndpointSliceObject; deleted?: boolean; resourceVersion?: string | undefined }): void {
    if (!name) return;
    let own = this.ownSlices.get(key);
    if (!own) this.ownSlices.set(key, (own = new Map()));
    const slice = write.slice && write.resourceVersion !== undefined ? { ...write.slice, metadata: { ...write.slice.metadata, resourceVersion: write.resourceVersion } } : write.slice;
    own.set(name, { slice: write.deleted ? undefined : slice, resourceVersion: write.resourceVersion, at: this.o.clock.now() });
  }

  /** The cached slices with this process's newer writes in place of the copies the cache has not caught up with. */
  private withOwnSliceWrites(key: string, cached: EndpointSliceObject[]): EndpointSliceObject[] {
    const own = this.ownSlices.get(key);
    if (!own || own.size === 0) return cached;
    const now = this.o.clock.now();
    // A cache that lags this long is not lagging: trust it, and a 409 if it is wrong.
    for (const [name, w] of own) if (now - w.at > OWN_SLICE_WRITE_TTL_MS) own.delete(name);
    const out: EndpointSliceObject[] = [];
    const seen = new Set<string>();
    for (const s of cached) {
      const name = s.metadata.name ?? "";
      seen.add(name);
      const mine = own.get(name);
      const rv = s.metadata.resourceVersion;
      if (!mine || (mine.slice && (rv === undefined || mine.resourceVersion === undefined || !newerThan(mine.resourceVersion, rv)))) {
        // Not ours, or the cache has caught up with (or gone past) our write.
        own.delete(name);
        out.push(s);
        continue;
      }
      if (!mine.slice) {
        // Deleted by us; a copy newer than the one we deleted is someone else's.
        if (mine.resourceVersion !== undefined && rv !== undefined && newerThan(rv, mine.resourceVersion)) {
          own.delete(name);
          out.push(s);
        }
        continue;
      }
      out.push(mine.slice);
    }
    for (const [name, mine] of own) {
      if (seen.has(name)) continue;
      if (mine.slice) out.push(mine.slice); // created, not in the cache yet
      else own.delete(name); // deleted, and the cache agrees
    }
    return out;
  }

  private async conflictIsStale<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if ((err as { code?: number }).code === 409) throw new StaleCacheError("write conflicted with a newer object; requeue", { cause: err });
      throw err;
    }
  }

  /** The per-policy ledger, or null when it cannot be read (then nothing is replaced). */
  private policyLedger(obj: PolicyObject): LedgerEntry[] | null {
    const status = this.written.get(keyOf(obj))?.status ?? statusOf(obj);
    const decoded = decodePolicyLedger(status?.replacements);
    return decoded.ok ? decoded.entries : null;
  }

  private async replace(log: Logger, policy: ParsedPolicy, targets: PodObject[], ledger: LedgerEntry[], now: number): Promise<{ plan: ReplacementPlan; ledger: LedgerEntry[] }> {
    const key = policy.key;
    const spec = policy.spec;
    const candidates: ReplacementCandidate[] = [];
    const others = this.otherPolicies(policy);
    for (const [uid, ref] of this.removed) {
      const cached = this.o.pods.get(ref.namespace, ref.name);
      if (!cached || uidOf(cached) !== uid || cached.metadata?.deletionTimestamp) this.removed.delete(uid);
    }
    let due = false;
    for (const pod of targets) {
      const uid = uidOf(pod);
      const h = this.o.health.get(key, uid);
      if (!h || h.state !== "Unhealthy") continue;
      const c: ReplacementCandidate = {
        uid,
        name: nameOf(pod),
        state: h.state,
        ownerReferences: pod.metadata?.ownerReferences ?? [],
        terminating: !!pod.metadata?.deletionTimestamp || this.removed.has(uid),
        otherViews: others
          .filter((o) => matchesLabelSelector(o.spec.selector, pod.metadata?.labels))
          .map((o) => {
            const view = this.o.health.get(o.key, uid);
            const v = { policy: o.key, replacementEnabled: o.spec.replacement.enabled && !o.spec.dryRun, state: view?.state ?? ("Unknown" as const), afterMs: o.afterMs };
            return view?.unhealthySince !== undefined ? { ...v, unhealthySince: view.unhealthySince } : v;
          }),
      };
      if (h.unhealthySince !== undefined) c.unhealthySince = h.unhealthySince;
      const pdb = this.pdbBlocked.get(uid);
      if (pdb && pdb.until > now) c.pdbBlockedUntil = pdb.until;
      candidates.push(c);
      if (h.unhealthySince !== undefined && h.unhealthySince + policy.afterMs <= now) due = true;
    }
    const base = {
      policy: key,
      maxPerHour: spec.replacement.maxPerHour,
      maxPerDay: spec.replacement.maxPerDay,
      replacementEnabled: spec.replacement.enabled,
      dryRun: spec.dryRun,
      afterMs: policy.afterMs,
      method: spec.replacement.method,
    };
    const otherBudgets: PolicyBudget[] = others.map((o) => ({ policy: o.key, maxPerHour: o.spec.replacement.maxPerHour, maxPerDay: o.spec.replacement.maxPerDay, ledger: this.policyLedger(o.obj) }));
    this.recordBudgetMetrics(key, ledger, spec, now);

    // The operator-wide ledger is read fresh, and only when some pod is due: no reads at steady state.
    let operator: { entries: LedgerEntry[] | null; resourceVersion?: string | undefined } = { entries: [] };
    if (due && spec.replacement.enabled && !spec.dryRun) operator = await this.readOperatorLedger(log);
    const plan = planReplacements({ now, policy: { ...base, ledger }, candidates, otherPolicies: otherBudgets, operatorLedger: operator.entries, max12h: this.o.maxReplacementsPer12h });

    for (const attempt of plan.attempts) {
      const pod = targets.find((p) => uidOf(p) === attempt.podUid)!;
      const entry = attempt.charge.entry;
      // 1. Charge every ledger and persist it before the API call.
      ledger = pruneLedger(chargeLedger(ledger, entry), now, DAY_MS);
      await this.persistPolicyLedger(policy.obj, ledger);
      for (const other of attempt.charge.policies.filter((p) => p !== key)) {
        const o = others.find((x) => x.key === other);
        const l = o ? this.policyLedger(o.obj) : null;
        if (o && l) await this.persistPolicyLedger(o.obj, pruneLedger(chargeLedger(l, entry), now, DAY_MS));
      }
      if (attempt.charge.operator) {
        operator.entries = pruneLedger(chargeLedger(operator.entries ?? [], entry), now, TWELVE_HOURS_MS);
        await this.persistOperatorLedger(operator);
      }
      this.o.failpoint?.("after-charge");
      // 2. Evict (or delete), with the pod's uid as a precondition.
      const ns = policy.obj.metadata.namespace;
      const outcome =
        attempt.method === "Delete"
          ? await this.o.writer.deletePod(ns, attempt.podName, attempt.podUid)
          : await this.o.writer.evictPod(ns, attempt.podName, attempt.podUid);
      this.o.failpoint?.("after-evict");
      if (outcome.outcome === "blocked") {
        // A PodDisruptionBudget refusal uses no budget: refund, and wait with backoff.
        ledger = refundLedger(ledger, entry.uid, entry.time);
        await this.persistPolicyLedger(policy.obj, ledger);
        for (const other of attempt.charge.policies.filter((p) => p !== key)) {
          const o = others.find((x) => x.key === other);
          const l = o ? this.policyLedger(o.obj) : null;
          if (o && l) await this.persistPolicyLedger(o.obj, refundLedger(l, entry.uid, entry.time));
        }
        if (attempt.charge.operator) {
          operator.entries = refundLedger(operator.entries ?? [], entry.uid, entry.time);
          await this.persistOperatorLedger(operator);
        }
        const prev = this.pdbBlocked.get(attempt.podUid);
        const backoffMs = Math.min(prev ? prev.backoffMs * 2 : (this.o.pdbBackoffMs ?? 5_000), this.o.maxPdbBackoffMs ?? 300_000);
        this.pdbBlocked.set(attempt.podUid, { until: now + backoffMs, backoffMs });
        plan.blocked.push({ podUid: attempt.podUid, podName: attempt.podName, step: "PodDisruptionBudget", reason: `eviction refused: ${outcome.message}`, blockedReason: "PodDisruptionBudget", waitUntil: now + backoffMs });
        plan.requeueAt = Math.min(plan.requeueAt ?? Infinity, now + backoffMs);
        plan.condition = { blocked: true, reason: "PodDisruptionBudget", message: `${attempt.podName}: eviction refused by a PodDisruptionBudget (${outcome.message}); retrying after ${Math.round(backoffMs / 1000)}s` };
        this.o.metrics?.replacementsTotal.inc({ policy: key, outcome: "pdb_blocked" });
        this.event(policy, pod, { type: "Warning", reason: "ReplacementBlocked", action: "Replace", note: `eviction of pod ${attempt.podName} refused by a PodDisruptionBudget: ${outcome.message}` });
        continue;
      }
      this.pdbBlocked.delete(attempt.podUid);
      this.removed.set(attempt.podUid, { namespace: ns, name: attempt.podName });
      this.o.metrics?.replacementsTotal.inc({ policy: key, outcome: outcome.outcome });
      log.info({ pod: attempt.podName, uid: attempt.podUid, method: attempt.method, outcome: outcome.outcome }, "pod replaced");
      if (outcome.outcome === "evicted") {
        this.event(policy, pod, { type: "Normal", reason: "Replaced", action: "Replace", note: `pod ${attempt.podName} ${attempt.method === "Delete" ? "deleted" : "evicted through the Eviction API"} after being Unhealthy for ${spec.replacement.after}` });
      }
    }
    return { plan, ledger };
  }

  private otherPolicies(policy: ParsedPolicy): ParsedPolicy[] {
    const out: ParsedPolicy[] = [];
    for (const obj of this.o.policies.list(policy.obj.metadata.namespace)) {
      if (obj.metadata?.name === policy.obj.metadata.name || obj.metadata?.deletionTimestamp) continue;
      const parsed = parsePolicySpec(obj.spec);
      if (!parsed.ok) continue;
      out.push({ obj: obj as ParsedPolicy["obj"], key: keyOf(obj), spec: parsed.spec, afterMs: parseDuration(parsed.spec.replacement.after) });
    }
    return out;
  }

  private async readOperatorLedger(log: Logger): Promise<{ entries: LedgerEntry[] | null; resourceVersion?: string | undefined }> {
    try {
      const cm = await this.o.writer.readConfigMap(this.o.operatorNamespace, this.ledgerName());
      const decoded = decodeOperatorLedger(cm?.data);
      if (!decoded.ok) {
        log.warn({ error: decoded.error }, "operator-wide ledger cannot be read; no replacements until it can");
        return { entries: null };
      }
      return { entries: decoded.entries, resourceVersion: cm?.metadata?.resourceVersion };
    } catch (err) {
      log.warn({ err }, "operator-wide ledger cannot be read; no replacements until it can");
      return { entries: null };
    }
  }

  private async persistOperatorLedger(operator: { entries: LedgerEntry[] | null; resourceVersion?: string | undefined }): Promise<void> {
    const out = (await this.conflictIsStale(() =>
      this.o.writer.writeConfigMap(this.o.operatorNamespace, this.ledgerName(), encodeOperatorLedger(operator.entries ?? []), operator.resourceVersion),
    )) as { metadata?: { resourceVersion?: string } };
    operator.resourceVersion = out?.metadata?.resourceVersion;
  }

  /** Writes a policy's status with only its ledger changed (optimistic concurrency on the cached object). */
  private async persistPolicyLedger(obj: PolicyObject & { metadata: { name: string; namespace: string } }, ledger: LedgerEntry[]): Promise<void> {
    const key = keyOf(obj);
    const mine = this.written.get(key);
    const base = mine?.status ?? (statusOf(obj) as PolicyStatus | undefined) ?? emptyStatus();
    const status = { ...base, replacements: encodePolicyLedger(ledger) } as PolicyStatus;
    const target = mine?.resourceVersion ? { ...obj, metadata: { ...obj.metadata, resourceVersion: mine.resourceVersion } } : obj;
    const out = await this.conflictIsStale(() => this.o.writer.replacePolicyStatus(target, status));
    this.written.set(key, { resourceVersion: out.resourceVersion, status });
    this.lastStatusWrite.set(key, this.o.clock.now());
    this.o.metrics?.statusWrites.inc();
  }

  private ledgerName(): string {
    return this.o.ledgerConfigMapName ?? DEFAULT_LEDGER_CONFIGMAP;
  }

  private async writeStatus(
    log: Logger,
    obj: PolicyObject & { metadata: { name: string; namespace: string } },
    readiness: ReadinessInput,
    pods: StatusPodInput[],
    drain: DrainPlan | undefined,
    replacement: { ledger: LedgerEntry[]; plan: ReplacementPlan | undefined } | undefined,
    now: number,
  ): Promise<ReconcileResult> {
    const key = keyOf(obj);
    const mine = this.written.get(key);
    const cached = statusOf(obj) as PolicyStatus | undefined;
    // The cache may lag our own last write; whichever is newer is "the status as last written".
    const previous = mine && (obj.metadata.resourceVersion === undefined || !newerThan(obj.metadata.resourceVersion, mine.resourceVersion)) ? mine.status : cached;
    const input: Parameters<typeof computeStatus>[0] = {
      generation: obj.metadata.generation ?? 0,
      now,
      previous,
      readiness,
      pods,
      drain,
    };
    // An unreadable ledger is kept as it is and blocks every replacement until it is repaired.
    const statusLedger = planStatusLedger(previous?.replacements, now, replacement?.ledger);
    input.replacements = statusLedger.replacements as PolicyStatus["replacements"];
    const cond = replacement?.plan?.condition;
    if (statusLedger.unreadable !== undefined) {
      input.replacementBlocked = { blocked: true, reason: "Budget", message: `status.replacements cannot be read (${statusLedger.unreadable}); nothing is replaced until it can be` };
    } else if (cond) {
      input.replacementBlocked = cond.blocked
        ? { blocked: true, reason: cond.reason as "Budget", message: cond.message }
        : { blocked: false, message: cond.message };
    }
    const next = computeStatus(input);
    if (statusEqual(previous, next)) return;
    if (!this.o.isLeader()) return;
    const last = this.lastStatusWrite.get(key);
    const interval = this.o.statusIntervalMs ?? 1000;
    if (last !== undefined && now - last < interval) return { requeueAfterMs: interval - (now - last) };

    const target = mine?.resourceVersion && previous === mine.status ? { ...obj, metadata: { ...obj.metadata, resourceVersion: mine.resourceVersion } } : obj;
    const out = await this.conflictIsStale(() => this.o.writer.replacePolicyStatus(target, next));
    this.written.set(key, { resourceVersion: out.resourceVersion, status: next });
    this.lastStatusWrite.set(key, now);
    this.o.metrics?.statusWrites.inc();
    log.debug({ targets: next.targets, healthy: next.healthy, drained: next.drained }, "status written");
    for (const e of planEvents(previous, next)) this.emit(obj, e);
    return;
  }

  private emit(obj: PolicyObject & { metadata: { name: string; namespace: string } }, e: PlannedEvent): void {
    const action = e.reason === "Drained" || e.reason === "Restored" || e.reason === "DrainCapped" || e.reason === "FailOpen" ? "Drain" : e.reason === "ReplacementBlocked" ? "Replace" : "Validate";
    const policyRef: ObjectRef = { apiVersion: API_VERSION, kind: KIND, namespace: obj.metadata.namespace, name: obj.metadata.name };
    if (obj.metadata.uid) policyRef.uid = obj.metadata.uid;
    if (e.regarding === "policy") {
      this.o.events.record({ regarding: policyRef, type: e.type, reason: e.reason, action, note: e.note });
      return;
    }
    const podRef: ObjectRef = { apiVersion: "v1", kind: "Pod", namespace: obj.metadata.namespace, name: e.regarding.podName, uid: e.regarding.podUid };
    this.o.events.record({ regarding: podRef, related: policyRef, type: e.type, reason: e.reason, action, note: e.note });
  }

  private event(policy: ParsedPolicy, pod: PodObject, e: { type: "Normal" | "Warning"; reason: string; action: string; note: string }): void {
    const policyRef: ObjectRef = { apiVersion: API_VERSION, kind: KIND, namespace: policy.obj.metadata.namespace, name: policy.obj.metadata.name };
    if (policy.obj.metadata.uid) policyRef.uid = policy.obj.metadata.uid;
    const podRef: ObjectRef = { apiVersion: "v1", kind: "Pod", namespace: policy.obj.metadata.namespace, name: nameOf(pod), uid: uidOf(pod) };
    this.o.events.record({ regarding: policyRef, related: podRef, ...e });
    this.o.events.record({ regarding: podRef, related: policyRef, ...e });
  }

  private recordTargetMetrics(key: string, pods: StatusPodInput[], drain: DrainPlan): void {
    const m = this.o.metrics;
    if (!m) return;
    for (const state of ["Healthy", "Unhealthy", "Unknown"] as const) {
      m.targets.set({ policy: key, state }, pods.filter((p) => p.health.state === state).length);
    }
    m.drainedTargets.set({ policy: key }, drain.drainedCount);
  }

  private recordBudgetMetrics(key: string, ledger: LedgerEntry[], spec: HealthProbePolicySpec, now: number): void {
    const m = this.o.metrics;
    if (!m) return;
    const b = computeBudget(ledger, now, { maxPerHour: spec.replacement.maxPerHour, maxPerDay: spec.replacement.maxPerDay });
    m.replacementBudgetRemaining.set({ policy: key, window: "hour" }, Math.max(0, spec.replacement.maxPerHour - b.usedHour));
    m.replacementBudgetRemaining.set({ policy: key, window: "day" }, Math.max(0, spec.replacement.maxPerDay - b.usedDay));
  }

  /** Operator-wide remaining budget, for the metric; called by the runtime after ledger reads. */
  static operatorRemaining(entries: LedgerEntry[], now: number, max12h: number): number {
    return Math.max(0, max12h - computeOperatorBudget(entries, now, max12h).used);
  }
}

interface OwnSliceWrite {
  /** What was written, with the resourceVersion the server gave it; undefined when deleted. */
  slice: EndpointSliceObject | undefined;
  resourceVersion: string | undefined;
  at: number;
}

const OWN_SLICE_WRITE_TTL_MS = 10_000;

function metadataOf(o: unknown): { name?: string; resourceVersion?: string } | undefined {
  return (o as { metadata?: { name?: string; resourceVersion?: string } } | undefined)?.metadata;
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf("/");
  return [key.slice(0, i), key.slice(i + 1)];
}

function uidOf(o: KubeObject): string {
  return o.metadata?.uid ?? "";
}

function nameOf(o: KubeObject): string {
  return o.metadata?.name ?? "";
}

function statusOf(obj: PolicyObject): Partial<PolicyStatus> | undefined {
  return obj.status as Partial<PolicyStatus> | undefined;
}

function emptyStatus(): PolicyStatus {
  return { observedGeneration: 0, conditions: [], targets: 0, healthy: 0, unhealthy: 0, unknown: 0, drained: 0, replacedLast24h: 0, pods: [], replacements: [] };
}

/** resourceVersions are opaque, but the API guarantees a total order only via the server; compare as integers when both are. */
function newerThan(a: string, b: string | undefined): boolean {
  if (b === undefined) return true;
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(a) > BigInt(b);
  return a !== b;
}

function isTarget(pod: PodObject): boolean {
  return pod.status?.phase === "Running" && podIPsOf(pod).length > 0 && !pod.metadata?.deletionTimestamp;
}

function toHealthTarget(pod: PodObject): HealthTarget {
  const startedAt = timeOf(pod.status?.startTime) ?? timeOf(pod.metadata?.creationTimestamp) ?? 0;
  return { uid: uidOf(pod), name: nameOf(pod), ip: podIPsOf(pod)[0] ?? "", startedAt };
}

function toSlicePod(pod: PodObject): SlicePod {
  const p: SlicePod = {
    name: nameOf(pod),
    namespace: pod.metadata?.namespace ?? "",
    uid: uidOf(pod),
    podIPs: podIPsOf(pod),
    kubeletReady: isKubeletReady(pod),
    terminating: !!pod.metadata?.deletionTimestamp,
    containers: (pod.spec?.containers ?? []).map((c) => ({ ports: (c.ports ?? []).map((port) => ({ ...port })) })) as SlicePod["containers"],
  };
  if (pod.metadata?.resourceVersion) p.resourceVersion = pod.metadata.resourceVersion;
  if (pod.spec?.nodeName) p.nodeName = pod.spec.nodeName;
  if (pod.spec?.hostname) p.hostname = pod.spec.hostname;
  if (pod.spec?.subdomain) p.subdomain = pod.spec.subdomain;
  if (pod.status?.phase) p.phase = pod.status.phase;
  return p;
}

function evaluationOf(spec: HealthProbePolicySpec): EvaluationSettings {
  const e = spec.evaluation;
  const s: EvaluationSettings = { failureThreshold: e.failureThreshold, successThreshold: e.successThreshold, startupGraceSeconds: e.startupGraceSeconds };
  if (e.window) s.window = { sampleSize: e.window.sampleSize, successfulSamplesRequired: e.window.successfulSamplesRequired };
  return s;
}
