// PodDisruptionBudget status, a small stand-in for pkg/controller/disruption/disruption.go (the
// reference, on the real control plane): expected pods (the pods' ReplicaSets' replicas, else the
// pods themselves), desired and current healthy, disruptions allowed (never negative),
// observedGeneration, the DisruptionAllowed condition, and disruptedPods entries pruned once
// processed or expired: what the Eviction API's refusal needs.
import type {
  PolicyV1Api,
  V1Pod,
  V1PodDisruptionBudget,
  V1PodDisruptionBudgetStatus,
  V1ReplicaSet,
  V1Condition,
} from "@kubernetes/client-node";
import { controllerRefOf, isNotFound, isPodReady, podKey, selectorMatches, splitKey } from "./pods.js";
import { OwnWrites } from "./own-writes.js";
import type { SyncResult } from "./work-queue.js";

/** How long an eviction's entry in disruptedPods may wait for its pod to go. */
export const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

export interface DisruptionControllerDeps {
  policy: PolicyV1Api;
  pods: { list(namespace?: string): ReadonlyArray<V1Pod> };
  budgets: {
    get(name: string, namespace?: string): V1PodDisruptionBudget | undefined;
    list(namespace?: string): ReadonlyArray<V1PodDisruptionBudget>;
  };
  replicaSets?: { get(name: string, namespace?: string): V1ReplicaSet | undefined };
  now: () => number;
  enqueue: (key: string) => void;
}

/** policy/v1: a null selector selects nothing, an empty one selects every pod in the namespace. */
function budgetSelects(pdb: V1PodDisruptionBudget, pod: V1Pod): boolean {
  const sel = pdb.spec?.selector;
  if (!sel) return false;
  return selectorMatches(sel, pod.metadata?.labels);
}

const toMs = (t: Date | string): number => new Date(t).getTime();

/** intstr.GetScaledValueFromIntOrPercent, rounding up. */
function scaled(value: number | string, total: number): number {
  if (typeof value === "number") return value;
  const m = /^(\d+)%$/.exec(value);
  if (!m) throw new Error(`invalid value for IntOrString: ${value}`);
  return Math.ceil((Number(m[1]) * total) / 100);
}

export interface ComputedBudget {
  expectedPods: number;
  desiredHealthy: number;
  currentHealthy: number;
  disruptionsAllowed: number;
  disruptedPods: Record<string, string>;
  /** When the next disruptedPods entry expires, if any. */
  recheckAtMs?: number;
}

export class DisruptionController {
  private readonly ownWrites = new OwnWrites();

  constructor(private readonly deps: DisruptionControllerDeps) {}

  podChanged(pod: V1Pod): void {
    for (const pdb of this.deps.budgets.list(pod.metadata?.namespace))
      if (budgetSelects(pdb, pod)) this.deps.enqueue(podKey(pdb));
  }

  /** A change of scale changes expectedPods of the budgets in that namespace. */
  controllerChanged(namespace: string): void {
    for (const pdb of this.deps.budgets.list(namespace)) this.deps.enqueue(podKey(pdb));
  }

  async sync(key: string): Promise<SyncResult> {
    const { namespace, name } = splitKey(key);
    const pdb = this.deps.budgets.get(name, namespace);
    if (!pdb) {
      this.ownWrites.forget(key);
      return;
    }
    // The cache does not show this controller's last status write yet: its watch event brings the next sync.
    if (this.ownWrites.behind(key, pdb.metadata?.resourceVersion)) return;
    const pods = this.deps.pods.list(namespace).filter((p) => budgetSelects(pdb, p));
    const computed = this.compute(pdb, pods);
    await this.write(pdb, computed);
    return computed.recheckAtMs !== undefined
      ? { requeueAfterMs: Math.max(0, computed.recheckAtMs - this.deps.now()) + 1 }
      : undefined;
  }

  compute(pdb: V1PodDisruptionBudget, pods: V1Pod[]): ComputedBudget {
    const now = this.deps.now();
    let expectedPods: number;
    let desiredHealthy: number;
    const spec = pdb.spec ?? {};
    if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
      expectedPods = this.expectedScale(pods);
      desiredHealthy = Math.max(0, expectedPods - scaled(spec.maxUnavailable as number | string, expectedPods));
    } else if (typeof spec.minAvailable === "number") {
      desiredHealthy = spec.minAvailable;
      expectedPods = pods.length;
    } else if (typeof spec.minAvailable === "string") {
      expectedPods = this.expectedScale(pods);
      desiredHealthy = scaled(spec.minAvailable, expectedPods);
    } else {
      // Neither set: nothing expected, so no disruptions are allowed.
      desiredHealthy = 0;
      expectedPods = 0;
    }
    const { disruptedPods, recheckAtMs } = this.prunedDisruptedPods(pdb, pods, now);
    let currentHealthy = 0;
    for (const pod of pods) {
      if (pod.metadata?.deletionTimestamp) continue;
      const since = disruptedPods[pod.metadata?.name ?? ""];
      if (since !== undefined && toMs(since) + DELETION_TIMEOUT_MS > now) continue;
      if (isPodReady(pod)) currentHealthy++;
    }
    let disruptionsAllowed = currentHealthy - desiredHealthy;
    // A budget matching no pods stays safe until its first pods are counted.
    if (expectedPods <= 0 || disruptionsAllowed <= 0) disruptionsAllowed = 0;
    return { expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed, disruptedPods, recheckAtMs };
  }

  /** buildDisruptedPodMap: keep entries of live pods that have not timed out. */
  private prunedDisruptedPods(
    pdb: V1PodDisruptionBudget,
    pods: V1Pod[],
    now: number,
  ): { disruptedPods: Record<string, string>; recheckAtMs?: number } {
    const recorded = pdb.status?.disruptedPods ?? {};
    const out: Record<string, string> = {};
    let recheckAtMs: number | undefined;
    for (const pod of pods) {
      if (pod.metadata?.deletionTimestamp) continue;
      const at = recorded[pod.metadata?.name ?? ""];
      if (at === undefined) continue;
      const expires = toMs(at) + DELETION_TIMEOUT_MS;
      if (expires < now) continue;
      out[pod.metadata!.name!] = new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z");
      recheckAtMs = recheckAtMs === undefined ? expires : Math.min(recheckAtMs, expires);
    }
    return { disruptedPods: out, recheckAtMs };
  }

  /** getExpectedScale, for ReplicaSets: their replicas; a pod without one in the cache counts as one. */
  private expectedScale(pods: V1Pod[]): number {
    const seen = new Set<string>();
    let total = 0;
    for (const pod of pods) {
      const ref = controllerRefOf(pod);
      const rs = ref?.kind === "ReplicaSet" ? this.deps.replicaSets?.get(ref.name, pod.metadata?.namespace) : undefined;
      if (!rs || rs.metadata?.uid !== ref?.uid) total++;
      else if (!seen.has(ref!.uid)) {
        seen.add(ref!.uid);
        total += rs.spec?.replicas ?? 0;
      }
    }
    return total;
  }

  private async write(pdb: V1PodDisruptionBudget, c: ComputedBudget): Promise<void> {
    const cur = pdb.status ?? ({} as V1PodDisruptionBudgetStatus);
    const generation = pdb.metadata?.generation ?? 0;
    const condition = this.condition(cur.conditions ?? [], c.disruptionsAllowed, generation);
    const curDisrupted = Object.fromEntries(Object.entries(cur.disruptedPods ?? {}).map(([k, v]) => [k, toMs(v)]));
    const newDisrupted = Object.fromEntries(Object.entries(c.disruptedPods).map(([k, v]) => [k, toMs(v)]));
    const curCondition = (cur.conditions ?? []).find((x) => x.type === "DisruptionAllowed");
    const same =
      (cur.expectedPods ?? 0) === c.expectedPods &&
      (cur.desiredHealthy ?? 0) === c.desiredHealthy &&
      (cur.currentHealthy ?? 0) === c.currentHealthy &&
      (cur.disruptionsAllowed ?? 0) === c.disruptionsAllowed &&
      (cur.observedGeneration ?? 0) === generation &&
      JSON.stringify(curDisrupted) === JSON.stringify(newDisrupted) &&
      curCondition?.status === condition.status &&
      curCondition?.reason === condition.reason &&
      (curCondition?.observedGeneration ?? 0) === generation;
    if (same) return;
    const status: V1PodDisruptionBudgetStatus = {
      expectedPods: c.expectedPods,
      desiredHealthy: c.desiredHealthy,
      currentHealthy: c.currentHealthy,
      disruptionsAllowed: c.disruptionsAllowed,
      observedGeneration: generation,
      ...(Object.keys(c.disruptedPods).length
        ? { disruptedPods: c.disruptedPods as unknown as Record<string, Date> }
        : {}),
      conditions: [...(cur.conditions ?? []).filter((x) => x.type !== "DisruptionAllowed"), condition],
    };
    const body = { ...structuredClone(pdb), status };
    try {
      const written = await this.deps.policy.replaceNamespacedPodDisruptionBudgetStatus({
        name: pdb.metadata!.name!,
        namespace: pdb.metadata!.namespace!,
        body,
      });
      this.ownWrites.wrote(podKey(pdb), pdb.metadata?.resourceVersion, written.metadata?.resourceVersion);
    } catch (err) {
      if (isNotFound(err)) return;
      throw new Error(`updating status of PodDisruptionBudget ${podKey(pdb)}`, { cause: err });
    }
  }

  /** pdbhelper.UpdateDisruptionAllowedCondition: the transition time moves only with the status. */
  private condition(conditions: V1Condition[], allowed: number, generation: number): V1Condition {
    const status = allowed > 0 ? "True" : "False";
    const reason = allowed > 0 ? "SufficientPods" : "InsufficientPods";
    const prev = conditions.find((x) => x.type === "DisruptionAllowed");
    const lastTransitionTime =
      prev && prev.status === status
        ? prev.lastTransitionTime
        : (new Date(this.deps.now()).toISOString().replace(/\.\d{3}Z$/, "Z") as unknown as Date);
    return {
      type: "DisruptionAllowed",
      status,
      reason,
      message: "",
      observedGeneration: generation,
      lastTransitionTime,
    };
  }
}
