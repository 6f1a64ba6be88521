// One reconcile per namespace (its own queue, never shared with policy keys): pods with the
// readiness gate that no ReadinessGate policy holds any more get healthprobe.io/ready True, so a
// deleted policy, or one switched to EndpointSlice or dryRun, never leaves pods out of rotation.
// Level-based and without a finalizer: a policy deleted while the operator was down is caught
// up on the sweep every start makes.
import { matchesLabelSelector } from "../domain/label-selector.js";
import { planGateRelease } from "../domain/gate-plan.js";
import { newReconcileId, type Logger } from "../runtime/logger.js";
import type { ReconcileResult } from "../runtime/work-queue.js";
import { hasReadinessGate, nameOf, uidOf, type ObjectCache, type PodObject, type PolicyObject } from "./kube-objects.js";
import { parsePolicy } from "./parsed-policy.js";
import type { ReadinessGates } from "./readiness-gates.js";

export interface GateReleaseOptions {
  policies: ObjectCache<PolicyObject>;
  pods: ObjectCache<PodObject>;
  gates: ReadinessGates;
  logger: Logger;
  isLeader: () => boolean;
}

export class GateRelease {
  constructor(private readonly o: GateReleaseOptions) {}

  async reconcile(namespace: string): Promise<ReconcileResult> {
    if (!this.o.isLeader()) return;
    const selectors = this.holdingSelectors(namespace);
    const pods = this.o.pods.list(namespace).filter(hasReadinessGate);
    const patches = planGateRelease(
      pods.map((p) => ({
        uid: uidOf(p),
        name: nameOf(p),
        gated: true,
        condition: this.o.gates.conditionOf(p),
        held: selectors.some((s) => matchesLabelSelector(s, p.metadata?.labels)),
        terminating: !!p.metadata?.deletionTimestamp,
      })),
    );
    if (patches.length === 0) return;
    const log = this.o.logger.child({ namespace, reconcileId: newReconcileId() });
    await this.o.gates.apply(log, namespace, pods, patches);
    return;
  }

  /** Selectors of the live, valid ReadinessGate policies of the namespace that write verdicts (not dryRun). */
  private holdingSelectors(namespace: string): Array<Parameters<typeof matchesLabelSelector>[0]> {
    const out: Array<Parameters<typeof matchesLabelSelector>[0]> = [];
    for (const obj of this.o.policies.list(namespace)) {
      if (obj.metadata?.deletionTimestamp) continue;
      const parsed = parsePolicy(obj);
      if (parsed.ok && parsed.policy.spec.drain.method === "ReadinessGate" && !parsed.policy.spec.dryRun) out.push(parsed.policy.spec.selector);
    }
    return out;
  }
}
