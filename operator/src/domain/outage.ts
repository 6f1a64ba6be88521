// A policy's outage: fail-open or fail-closed, computed here and nowhere else. The drain plan
// routes by it; replacement holds to it, the deciding policy's own and every other selecting
// policy's alike, each from the same inputs (its targets as its health store judges them, and
// its newest known status), so no decision depends on which policy reconciled first.
import type { Condition, HealthStateName } from "./types.js";

/** spec.drain.whenAllUnhealthy, and the condition that reports it True. */
export type Outage = "FailOpen" | "FailClosed";

export const OUTAGES: readonly Outage[] = ["FailOpen", "FailClosed"];

/** One target as the outage sees it: its state as routed (a pod that is not probed is Unknown). */
export interface OutageTarget {
  /** Ready as the drain method counts it (with ReadinessGate: Ready but for the operator's gate). */
  kubeletReady: boolean;
  state: HealthStateName;
}

/**
 * The outage now: no target is both kubelet-Ready and Healthy (zero targets aside: there is
 * nothing to keep in rotation), and the policy fails open or closed as whenAllUnhealthy says.
 */
export function currentOutage(
  targets: readonly OutageTarget[],
  whenAllUnhealthy: Outage = "FailOpen",
): Outage | undefined {
  const noHealthy = targets.length > 0 && !targets.some((t) => t.kubeletReady && t.state === "Healthy");
  return noHealthy ? whenAllUnhealthy : undefined;
}

/** The outage the policy's status reports: the first of `types` whose condition is True. */
export function reportedOutage(
  conditions: readonly Pick<Condition, "type" | "status">[] | undefined,
  types: readonly Outage[] = OUTAGES,
): Outage | undefined {
  return types.find((type) => conditions?.some((c) => c.type === type && c.status === "True"));
}

/**
 * The outage replacement holds to: the one found now (undefined when it cannot be known, e.g.
 * the policy does not probe the pod), else the one its status still reports. An outage counts
 * until the status says it has ended: an eviction never meets a status that still shows it.
 */
export function standingOutage(current: Outage | undefined, reported: Outage | undefined): Outage | undefined {
  return current ?? reported;
}

/** The same, as the replacement planner's flags. */
export function outageFlags(outage: Outage | undefined): { failOpen: boolean; failClosed: boolean } {
  return { failOpen: outage === "FailOpen", failClosed: outage === "FailClosed" };
}
