// The target families: each policy's targets by health state, drained, in flap quarantine, and
// disagreeing with their kubelet.
import { Gauge, type Registry } from "prom-client";
import type { OperatorMetrics } from "./metrics.js";

export function targetMetrics(
  registers: Registry[],
): Pick<OperatorMetrics, "targets" | "drainedTargets" | "quarantinedTargets" | "kubeletDisagreements"> {
  const targets = new Gauge({
    name: "healthprobe_targets",
    help: "Probe targets by health state.",
    labelNames: ["policy", "state"] as const,
    registers,
  });
  const drainedTargets = new Gauge({
    name: "healthprobe_drained_targets",
    help: "Targets drained from the Service's EndpointSlices.",
    labelNames: ["policy"] as const,
    registers,
  });
  const quarantinedTargets = new Gauge({
    name: "healthprobe_quarantined_targets",
    help: "Targets in flap quarantine, held out of rotation or kept in by the cap.",
    labelNames: ["policy"] as const,
    registers,
  });
  const disagreementsHelp =
    "Targets whose verdict has disagreed with their kubelet Ready condition for longer than one probe period, by kind (the shadow report).";
  const kubeletDisagreements = new Gauge({
    name: "healthprobe_kubelet_disagreements",
    help: disagreementsHelp,
    labelNames: ["policy", "kind"] as const,
    registers,
  });
  return { targets, drainedTargets, quarantinedTargets, kubeletDisagreements };
}
