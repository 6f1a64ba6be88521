// The controller families: reconciles and work queues by controller, leadership, and the status
// and Event writes sent to the API server.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { OperatorMetrics } from "./metrics.js";

type ControllerFamilies = Pick<
  OperatorMetrics,
  | "reconcileDuration"
  | "reconcileErrors"
  | "workqueueDepth"
  | "workqueueAdds"
  | "leader"
  | "statusWrites"
  | "eventWrites"
>;

export function controllerFamilies(registers: Registry[]): ControllerFamilies {
  // By controller, as controller-runtime labels them: "policy" (one policy), "replacement" (one policy's replacements), "service-slices" (one Service's slices) and "gate-release" (one namespace's gated pods).
  const reconcileDuration = new Histogram({
    name: "healthprobe_reconcile_duration_seconds",
    help: "Time to reconcile one key, by controller.",
    labelNames: ["controller"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const reconcileErrors = new Counter({
    name: "healthprobe_reconcile_errors_total",
    help: "Reconciles that failed, by controller.",
    labelNames: ["controller"],
    registers,
  });
  const workqueueDepth = new Gauge({
    name: "healthprobe_workqueue_depth",
    help: "Keys waiting in a work queue, by queue.",
    labelNames: ["queue"],
    registers,
  });
  const workqueueAdds = new Counter({
    name: "healthprobe_workqueue_adds_total",
    help: "Keys added to a work queue, by queue.",
    labelNames: ["queue"],
    registers,
  });
  const leader = new Gauge({
    name: "healthprobe_leader",
    help: "1 while this replica holds the leader Lease, else 0.",
    registers,
  });
  const statusWrites = new Counter({
    name: "healthprobe_status_writes_total",
    help: "Status writes to the API server.",
    registers,
  });
  const eventWrites = new Counter({
    name: "healthprobe_event_writes_total",
    help: "Event creates and patches sent to the API server.",
    registers,
  });
  leader.set(0);
  return { reconcileDuration, reconcileErrors, workqueueDepth, workqueueAdds, leader, statusWrites, eventWrites };
}
