// One reconcile per namespace (its own queue, never shared with policy keys): pods with the
// readiness gate that no ReadinessGate policy holds any more get healthprobe.io/ready True, so a
// deleted policy, or one switched to EndpointSlice or dryRun, never leaves pods out of rotation.
// Level-based and without a finalizer: a policy deleted while the operator was down is caught
// up on the sweep every start makes.
import { planGateRelease } from "../domain/gate-plan.js";
import { newReconcileId, type Logger } from "../runtime/logger.js";
import type { ReconcileResult } from "../runtime/work-queue.js";
import {
  hasReadinessGate,
  nameOf,
  uidOf,
  type ObjectCache,
  type PodObject,
  type PolicyObject,
} from "./kube-objects.js";
import { gateHolders, holderOf } from "./gate-holders.js";
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
    const holders = gateHolders(this.o.policies, namespace);
    const pods = this.o.pods.list(namespace).filter(hasReadinessGate);
    const patches = planGateRelease(
      pods.map((p) => ({
        uid: uidOf(p),
        name: nameOf(p),
        gated: true,
        condition: this.o.gates.conditionOf(p),
        held: holderOf(holders, p) !== undefined,
        terminating: !!p.metadata?.deletionTimestamp,
      })),
    );
    if (patches.length === 0) return;
    const log = this.o.logger.child({ namespace, reconcileId: newReconcileId() });
    await this.o.gates.apply(log, namespace, pods, patches);
    return;
  }
}
