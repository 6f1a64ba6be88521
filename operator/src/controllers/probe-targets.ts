// The probe-targets part: which of a policy's selected pods are probed, and what the scheduler
// runs for each (with header and signature Secrets read through a small TTL cache, since Secrets
// are read, not watched). It also remembers what each policy selected, so a relabelled pod wakes
// the policy that used to select it, and keeps each policy's selected pods up to date from pod
// changes, so a reconcile does not match every pod of the namespace against the selector (a
// policy's first look reads only the pods carrying its matchLabels, pod-label-index.ts). A pod
// change finds the policies and selections it concerns through their selectors filed by label
// (selector-index.ts), not by matching every policy of the namespace.
import type { HealthProbePolicySpec } from "../api/policy-schema.js";
import type { ChangeType, WatchedCache } from "./caches.js";
import { computeHealthSeeds } from "../domain/health-seed.js";
import {
  hostNetworkRefusal,
  secretForbiddenMessage,
  secretNotPermittedMessage,
  secretPermits,
  secretPermitsAny,
} from "../domain/probe-access.js";
import { effectiveProbeTimeout } from "../domain/probe-timeout.js";
import { planProbe, secretRefsOf, type ProbePlanProblem, type SecretRef } from "../domain/probe-plan.js";
import { evaluationSettingsOf } from "../domain/types.js";
import type { Clock } from "../runtime/clock.js";
import type { HealthStore, HealthTarget } from "../runtime/health-store.js";
import type { ProbeTarget } from "../runtime/probe-scheduler.js";
import { keyOf, nameOf, podIPsOf, splitKey, timeOf, uidOf, type PodObject, type PolicyObject } from "./kube-objects.js";
import { addTo, removeFrom } from "./nested-sets.js";
import { PodLabelIndex } from "./pod-label-index.js";
import { SelectorIndex } from "./selector-index.js";
import type { PolicyWriter, SecretForbidden, SecretKeyRead } from "./policy-writer.js";

/** Secrets are read, not watched: a policy waiting for a missing one looks again this often. */
export const MISSING_SECRET_RETRY_MS = 5_000;
/** After a restart, pods restored from status are probed early (at the scheduler's earlyPerSecond) rather than at a random point of their period. */
const RESTORED_FIRST_PROBE_WITHIN_MS = 2_000;

export interface ProbeTargetsOptions {
  policies: WatchedCache<PolicyObject>;
  pods: WatchedCache<PodObject>;
  secrets: Pick<PolicyWriter, "readSecretKey">;
  scheduler: {
    setTargets(owner: string, targets: ProbeTarget[]): void;
    probeNow(owner: string, ids: readonly string[]): void;
  };
  health: HealthStore;
  clock: Clock;
  secretTtlMs?: number;
  /** --max-probe-timeout (the scheduler applies it): a policy asking for more is told so in its status; 0 or absent: no cap. */
  maxProbeTimeoutMs?: number;
}

export interface Selection {
  /** Every pod the selector matches. */
  selected: PodObject[];
  /** The selected pods that can be probed: Running, with an IP, not terminating. */
  targets: PodObject[];
}

export type ProbePlanResult =
  | {
      ok: true;
      targets: ProbeTarget[];
      /** Targets that cannot be probed (a named port the pod lacks, hostNetwork not opted in), by uid, with why. */
      notProbed: Map<string, string>;
      /** Why the probe runs with a shorter timeout than spec.probe.timeoutSeconds, when --max-probe-timeout caps it. */
      timeoutCapped?: string;
    }
  | { ok: false; reason: ProbePlanProblem; field: string; message: string };

/** What the operator knows of a policy's pods when it starts probing them. */
export interface ProbingStart {
  /** The operator has state for the pod (earlier probing by this process, or the persisted status). */
  known(uid: string): boolean;
}

export class ProbeTargets {
  private readonly secretCache = new Map<string, { at: number; read: SecretKeyRead | SecretForbidden | undefined }>();
  /** Pod uids each policy selected at its last reconcile. */
  private readonly selectedBy = new Map<string, Set<string>>();
  /** The same, by pod uid: the policies that selected it at their last reconcile. */
  private readonly selectorsOf = new Map<string, Set<string>>();
  /** Pod uids each policy is probing now; absent while the policy is not probing at all. */
  private readonly probing = new Map<string, Set<string>>();
  /** Per policy: the selector it was built for and the names of the pods that match it, kept up to date by pod changes. */
  private readonly selectorIndex = new Map<string, { namespace: string; selectorJson: string; names: Set<string> }>();

  private readonly labels: PodLabelIndex;
  /** The selectors of selectorIndex's entries, by policy key. */
  private readonly entrySelectors = new SelectorIndex();
  /** Every cached policy's selector (as written, unvalidated), by policy key. */
  private readonly policySelectors = new SelectorIndex();

  constructor(private readonly o: ProbeTargetsOptions) {
    this.labels = new PodLabelIndex(o.pods);
    o.pods.onChange((pod, type) => {
      const before = this.labels.labelsOf(pod.metadata?.namespace ?? "", nameOf(pod));
      this.labels.changed(pod, type);
      this.podChanged(pod, type, before);
    });
    o.pods.onForget?.((namespace) => this.forgetNamespace(namespace));
    const filePolicy = (p: PolicyObject) =>
      this.policySelectors.set(
        keyOf(p),
        p.metadata?.namespace ?? "",
        (p.spec as { selector?: unknown } | undefined)?.selector,
      );
    for (const p of o.policies.list()) filePolicy(p);
    o.policies.onChange((p, type) => (type === "delete" ? this.policySelectors.delete(keyOf(p)) : filePolicy(p)));
  }

  /** The policy's selected pods and targets, remembered for policiesForPod. */
  select(key: string, namespace: string, spec: HealthProbePolicySpec): Selection {
    const selectorJson = JSON.stringify(spec.selector);
    let entry = this.selectorIndex.get(key);
    if (!entry || entry.namespace !== namespace || entry.selectorJson !== selectorJson) {
      // A new policy or a new selector: one pass over the namespace's pods, then pod changes keep it.
      const names = new Set(this.labels.matching(namespace, spec.selector).map(nameOf));
      entry = { namespace, selectorJson, names };
      this.selectorIndex.set(key, entry);
      this.entrySelectors.set(key, namespace, spec.selector);
    }
    const selected: PodObject[] = [];
    for (const name of entry.names) {
      const pod = this.o.pods.get(namespace, name);
      if (pod) selected.push(pod);
    }
    this.setSelectedBy(key, new Set(selected.map(uidOf)));
    return { selected, targets: selected.filter(isTarget) };
  }

  /** The policy's targets now, without remembering anything: from its selector index when current, else one pass over the namespace. */
  targetsOf(key: string, namespace: string, spec: HealthProbePolicySpec): PodObject[] {
    const entry = this.selectorIndex.get(key);
    const selected =
      entry && entry.namespace === namespace && entry.selectorJson === JSON.stringify(spec.selector)
        ? [...entry.names]
            .map((name) => this.o.pods.get(namespace, name))
            .filter((p): p is PodObject => p !== undefined)
        : this.labels.matching(namespace, spec.selector);
    return selected.filter(isTarget);
  }

  /** An entry holds exactly the pods its selector matches: those its labels before matched, less the pod, plus it again if its labels now match. */
  private podChanged(pod: PodObject, type: ChangeType, before: Readonly<Record<string, string>> | undefined): void {
    const namespace = pod.metadata?.namespace ?? "";
    const name = nameOf(pod);
    if (before)
      for (const key of this.entrySelectors.matching(namespace, before))
        this.selectorIndex.get(key)?.names.delete(name);
    if (type !== "delete")
      for (const key of this.entrySelectors.matching(namespace, pod.metadata?.labels))
        this.selectorIndex.get(key)?.names.add(name);
  }

  /** Policy keys that select (or last selected) a pod. */
  policiesForPod(pod: PodObject): string[] {
    const keys = new Set(this.policySelectors.matching(pod.metadata?.namespace ?? "", pod.metadata?.labels));
    for (const key of this.selectorsOf.get(uidOf(pod)) ?? []) keys.add(key);
    return [...keys];
  }

  private setSelectedBy(key: string, uids: Set<string> | undefined): void {
    for (const uid of this.selectedBy.get(key) ?? []) if (!uids?.has(uid)) removeFrom(this.selectorsOf, uid, key);
    for (const uid of uids ?? []) addTo(this.selectorsOf, uid, key);
    if (uids) this.selectedBy.set(key, uids);
    else this.selectedBy.delete(key);
  }

  /**
   * Plans every target's probe; a Secret that cannot be read, or that does not allow the policy
   * (its annotation healthprobe.io/allowed-policies), fails the policy, naming the field. A
   * refused Secret's value is never handed on, whether the policy has targets or not.
   */
  async plan(
    namespace: string,
    policyName: string,
    spec: HealthProbePolicySpec,
    targets: readonly PodObject[],
  ): Promise<ProbePlanResult> {
    const values = new Map<string, Uint8Array | undefined>();
    for (const { field, ref } of secretRefsOf(spec.probe)) {
      const read = await this.secret(namespace, ref, policyName);
      if (read && "forbidden" in read)
        return {
          ok: false,
          reason: "SecretForbidden",
          field,
          message: secretForbiddenMessage(ref.name, read.forbidden),
        };
      if (read && !secretPermits(read.allowedPolicies, policyName)) {
        return {
          ok: false,
          reason: "SecretNotPermitted",
          field,
          message: secretNotPermittedMessage(ref.name, policyName),
        };
      }
      values.set(`${ref.name}/${ref.key}`, read?.value);
    }
    const lookup = (ref: SecretRef) => values.get(`${ref.name}/${ref.key}`);

    const out: ProbeTarget[] = [];
    const notProbed = new Map<string, string>();
    for (const pod of targets) {
      // A hostNetwork pod answers on its node's address: probed only when it opts in.
      const refused = hostNetworkRefusal({
        hostNetwork: pod.spec?.hostNetwork,
        annotations: pod.metadata?.annotations,
      });
      if (refused !== undefined) {
        notProbed.set(uidOf(pod), refused);
        continue;
      }
      const planned = planProbe(spec.probe, { ip: podIPsOf(pod)[0]!, containers: pod.spec?.containers ?? [] }, lookup);
      if (!planned.ok) {
        // A named port one pod lacks is that pod's problem, not the policy's: it is reported, not probed.
        if (planned.reason === "PortNotResolved") {
          notProbed.set(uidOf(pod), planned.message);
          continue;
        }
        return planned;
      }
      out.push({ id: uidOf(pod), ...planned.probe });
    }
    const { cappedReason } = effectiveProbeTimeout(spec.probe.timeoutSeconds * 1000, this.o.maxProbeTimeoutMs ?? 0);
    return {
      ok: true,
      targets: out,
      notProbed,
      ...(cappedReason !== undefined ? { timeoutCapped: cappedReason } : {}),
    };
  }

  /**
   * Starts probing the planned targets and tells the health store which pods to judge (seeded
   * from status after a restart). A policy that was not probing (it was not Ready) starts its
   * probing afresh: results from before are no evidence for a replacement.
   */
  start(
    key: string,
    policy: PolicyObject,
    spec: HealthProbePolicySpec,
    targets: readonly PodObject[],
    probes: ProbeTarget[],
    now: number,
  ): ProbingStart {
    const storeKnew = this.o.health.has(key);
    const seeds = storeKnew
      ? new Map()
      : computeHealthSeeds((policy.status as { pods?: never } | undefined)?.pods as never);
    // A pod whose state status restored is serving: probe it soon, not a random part of a period away.
    this.o.scheduler.setTargets(
      key,
      seeds.size === 0
        ? probes
        : probes.map((t) => (seeds.has(t.id) ? { ...t, firstWithinMs: RESTORED_FIRST_PROBE_WITHIN_MS } : t)),
    );
    if (storeKnew && !this.probing.has(key)) this.o.health.restartProbing(key, now);
    this.probing.set(key, new Set(probes.map((p) => p.id)));
    this.o.health.configure(key, evaluationSettingsOf(spec.evaluation), targets.map(toHealthTarget), seeds, now);
    return { known: (uid) => storeKnew || seeds.has(uid) };
  }

  /** Whether the policy is probing the pod now (it is Ready and the pod is one of its probed targets). */
  isProbing(key: string, uid: string): boolean {
    return this.probing.get(key)?.has(uid) ?? false;
  }

  /** Probes these targets of the policy at once (the recovery sweep). */
  probeNow(key: string, uids: readonly string[]): void {
    this.o.scheduler.probeNow(key, uids);
  }

  stop(key: string): void {
    this.o.scheduler.setTargets(key, []);
    this.setSelectedBy(key, undefined);
    this.selectorIndex.delete(key);
    this.entrySelectors.delete(key);
    this.probing.delete(key);
  }

  /**
   * The pod cache forgot the namespace (this replica let it go): nothing built from its pods is
   * kept, and a policy there selects afresh if the namespace comes back.
   */
  private forgetNamespace(namespace: string): void {
    this.labels.forgetNamespace(namespace);
    const keys = new Set([...this.selectorIndex.keys(), ...this.selectedBy.keys(), ...this.probing.keys()]);
    for (const key of keys) if (splitKey(key)[0] === namespace) this.stop(key);
  }

  forget(key: string): void {
    this.stop(key);
    this.o.health.drop(key);
  }

  /**
   * The Secret's annotation and key, through the TTL cache. The value of a Secret that allows no
   * policy is not kept. A missing, refused or forbidden one is read again after MISSING_SECRET_RETRY_MS,
   * so an annotation (or RBAC) added heals the policy soon; one removed is seen within the TTL.
   */
  private async secret(
    namespace: string,
    ref: SecretRef,
    policyName: string,
  ): Promise<SecretKeyRead | SecretForbidden | undefined> {
    const k = `${namespace}/${ref.name}/${ref.key}`;
    const now = this.o.clock.now();
    const hit = this.secretCache.get(k);
    const ttl = this.o.secretTtlMs ?? 60_000;
    const usable =
      hit?.read !== undefined &&
      "value" in hit.read &&
      hit.read.value !== undefined &&
      secretPermits(hit.read.allowedPolicies, policyName);
    if (hit && now - hit.at < (usable ? ttl : Math.min(ttl, MISSING_SECRET_RETRY_MS))) return hit.read;
    const got = await this.o.secrets.readSecretKey(namespace, ref.name, ref.key);
    const read =
      got &&
      ("forbidden" in got
        ? got
        : {
            allowedPolicies: got.allowedPolicies,
            value: secretPermitsAny(got.allowedPolicies) ? got.value : undefined,
          });
    this.secretCache.set(k, { at: now, read });
    return read;
  }
}

export function isTarget(pod: PodObject): boolean {
  return pod.status?.phase === "Running" && podIPsOf(pod).length > 0 && !pod.metadata?.deletionTimestamp;
}

function toHealthTarget(pod: PodObject): HealthTarget {
  const startedAt = timeOf(pod.status?.startTime) ?? timeOf(pod.metadata?.creationTimestamp) ?? 0;
  return { uid: uidOf(pod), name: nameOf(pod), ip: podIPsOf(pod)[0] ?? "", startedAt };
}
