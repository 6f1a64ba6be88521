// The readiness-gate part: writes the pod condition healthprobe.io/ready as the gate plan says,
// one pod at a time (one pod that cannot be written never blocks the others), and remembers what
// it wrote until the pod cache shows it, so a reconcile in between plans on what the pods have.
import { READINESS_GATE_CONDITION } from "../api/group.js";
import type { GatePatch } from "../domain/gate-plan.js";
import { toRfc3339 } from "../domain/status-time.js";
import type { Clock } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import { gateConditionOf, nameOf, uidOf, type PodCondition, type PodObject } from "./kube-objects.js";
import type { PolicyWriter } from "./policy-writer.js";

/** How long a written condition stands in for the cache's, at most (the watch event usually comes in milliseconds). */
const WRITTEN_TTL_MS = 30_000;

export interface ReadinessGatesOptions {
  writer: Pick<PolicyWriter, "patchPodCondition">;
  clock: Clock;
}

export class GateWriteError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = "GateWriteError";
  }
}

export class ReadinessGates {
  /** The condition this process last wrote on each pod (by uid), until the cache shows it. */
  private readonly written = new Map<string, { condition: PodCondition; at: number }>();

  constructor(private readonly o: ReadinessGatesOptions) {}

  /** The pod's gate condition: the one this process wrote, while the cache has not caught up with it. */
  conditionOf(pod: PodObject): PodCondition | undefined {
    const cached = gateConditionOf(pod);
    const mine = this.written.get(uidOf(pod));
    if (!mine) return cached;
    const caughtUp =
      cached &&
      cached.status === mine.condition.status &&
      cached.reason === mine.condition.reason &&
      cached.message === mine.condition.message;
    if (caughtUp || this.o.clock.now() - mine.at > WRITTEN_TTL_MS) {
      this.written.delete(uidOf(pod));
      return cached;
    }
    return mine.condition;
  }

  /** Writes every patch; throws after trying them all when any failed (a 404 is a pod gone, not a failure). */
  async apply(
    log: Logger,
    namespace: string,
    pods: readonly PodObject[],
    patches: readonly GatePatch[],
  ): Promise<void> {
    const byUid = new Map(pods.map((p) => [uidOf(p), p]));
    const failures: Error[] = [];
    for (const patch of patches) {
      const pod = byUid.get(patch.uid);
      if (!pod) continue;
      const now = this.o.clock.now();
      const c = patch.condition;
      const condition = {
        type: READINESS_GATE_CONDITION,
        status: c.status,
        reason: c.reason,
        message: c.message,
        ...(patch.transition ? { lastTransitionTime: toRfc3339(now) } : {}),
      };
      try {
        const outcome = await this.o.writer.patchPodCondition(namespace, nameOf(pod), patch.uid, condition);
        if (outcome === "gone") continue;
        this.written.set(patch.uid, {
          condition: { type: READINESS_GATE_CONDITION, status: c.status, reason: c.reason, message: c.message },
          at: now,
        });
        if (patch.transition)
          log.info(
            { pod: nameOf(pod), status: c.status, reason: c.reason, verdict: c.message },
            `pod ${nameOf(pod)} ${READINESS_GATE_CONDITION}=${c.status}`,
          );
      } catch (err) {
        failures.push(err as Error);
      }
    }
    if (failures.length > 0) {
      throw new GateWriteError(
        `writing ${READINESS_GATE_CONDITION} failed on ${failures.length} of ${patches.length} pods: ${failures[0]!.message}`,
        { cause: failures[0] },
      );
    }
  }

  /** Forgets pods that are gone. */
  forget(uids: Iterable<string>): void {
    for (const uid of uids) this.written.delete(uid);
  }
}
