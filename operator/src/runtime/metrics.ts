// Prometheus metrics on a private registry, so tests and multiple instances never collide
// through prom-client's global default registry.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { ProbeFailureKind } from "../domain/probe-request.js";

export interface OperatorMetrics {
  registry: Registry;
  probesTotal: Counter<"policy" | "result" | "class">;
  probeDuration: Histogram<"policy">;
  targets: Gauge<"policy" | "state">;
  drainedTargets: Gauge<"policy">;
  /** Targets in flap quarantine, whether held out of rotation or kept in by the cap. */
  quarantinedTargets: Gauge<"policy">;
  kubeletDisagreements: Gauge<"policy" | "kind">;
  replacementsTotal: Counter<"policy" | "outcome">;
  replacementBudgetRemaining: Gauge<"policy" | "window">;
  operatorReplacementBudgetRemaining: Gauge;
  reconcileDuration: Histogram;
  reconcileErrors: Counter;
  workqueueDepth: Gauge;
  workqueueAdds: Counter;
  leader: Gauge;
  statusWrites: Counter;
  eventWrites: Counter;
  /** Probes in flight by namespace, read at each scrape from the source given to watchProbesInFlight. */
  probesInFlight: Gauge<"namespace">;
  /**
   * Feeds probesInFlight from the fair probe slots: one series per namespace that has policies
   * (so the label's cardinality is the namespaces', and a namespace's series goes with its last policy).
   */
  watchProbesInFlight(source: ProbesInFlightSource): void;
  /** Records one probe outcome; the class label is the failure's kind, "" for successes. */
  recordProbe(
    policy: string,
    outcome: { ok: true } | { ok: false; class: ProbeFailureKind },
    durationSeconds: number,
  ): void;
  /** Drops every labelled series of a deleted policy so it stops being exported. */
  forgetPolicy(policy: string): Promise<void>;
}

export interface ProbesInFlightSource {
  /** The namespaces that have policies now. */
  namespaces(): Iterable<string>;
  inFlightOf(namespace: string): number;
}

export interface MetricsOptions {
  /** Node.js process metrics (CPU, memory, event loop lag); on by default. */
  processMetrics?: boolean;
}

export function createMetrics(opts: MetricsOptions = {}): OperatorMetrics {
  const registry = new Registry();
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const probesTotal = new Counter({
    name: "healthprobe_probes_total",
    help: "Probes run, by policy, result and failure class.",
    labelNames: ["policy", "result", "class"] as const,
    registers,
  });
  const probeDuration = new Histogram({
    name: "healthprobe_probe_duration_seconds",
    help: "Probe duration from connect to judged response.",
    labelNames: ["policy"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
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
  const replacementsTotal = new Counter({
    name: "healthprobe_replacements_total",
    help: "Pod replacements attempted, by outcome.",
    labelNames: ["policy", "outcome"] as const,
    registers,
  });
  const replacementBudgetRemaining = new Gauge({
    name: "healthprobe_replacement_budget_remaining",
    help: "Replacements a policy may still make in its hourly or daily window.",
    labelNames: ["policy", "window"] as const,
    registers,
  });
  const operatorReplacementBudgetRemaining = new Gauge({
    name: "healthprobe_operator_replacement_budget_remaining",
    help: "Replacements the operator may still make in the current 12 h window.",
    registers,
  });
  // By controller, as controller-runtime labels them: "policy" (one policy), "service-slices" (one Service's slices) and "gate-release" (one namespace's gated pods).
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
  const inFlight = probesInFlightGauge(registers);
  leader.set(0);
  operatorReplacementBudgetRemaining.set(0);

  return {
    registry,
    probesTotal,
    probeDuration,
    targets,
    drainedTargets,
    quarantinedTargets,
    kubeletDisagreements,
    replacementsTotal,
    replacementBudgetRemaining,
    operatorReplacementBudgetRemaining,
    reconcileDuration,
    reconcileErrors,
    workqueueDepth,
    workqueueAdds,
    leader,
    statusWrites,
    eventWrites,
    probesInFlight: inFlight.gauge,
    watchProbesInFlight: inFlight.watch,
    recordProbe(policy, outcome, durationSeconds) {
      probesTotal.inc({ policy, result: outcome.ok ? "success" : "failure", class: outcome.ok ? "" : outcome.class });
      probeDuration.observe({ policy }, durationSeconds);
    },
    forgetPolicy: (policy) =>
      removeSeriesOf(policy, [
        probesTotal,
        probeDuration,
        targets,
        drainedTargets,
        quarantinedTargets,
        kubeletDisagreements,
        replacementsTotal,
        replacementBudgetRemaining,
      ]),
  };
}

/** healthprobe_probes_in_flight, rebuilt at each scrape from the source watch() gives it. */
function probesInFlightGauge(registers: Registry[]): {
  gauge: Gauge<"namespace">;
  watch(source: ProbesInFlightSource): void;
} {
  let source: ProbesInFlightSource | undefined;
  const gauge = new Gauge({
    name: "healthprobe_probes_in_flight",
    help: "Probes in flight by namespace: each namespace's use of its share of the probe slots (--max-probes-in-flight-per-namespace).",
    labelNames: ["namespace"] as const,
    registers,
    collect() {
      if (!source) return;
      // A namespace without policies has no series.
      this.reset();
      for (const namespace of new Set(source.namespaces())) this.set({ namespace }, source.inFlightOf(namespace));
    },
  });
  return { gauge, watch: (s) => void (source = s) };
}

/** A work queue's share of the queue metrics. */
export function queueMetrics(
  m: Pick<OperatorMetrics, "workqueueAdds" | "workqueueDepth">,
  queue: string,
): { adds: { inc(): void }; depth: { set(value: number): void } } {
  return { adds: m.workqueueAdds.labels({ queue }), depth: m.workqueueDepth.labels({ queue }) };
}

/** A controller's share of the reconcile metrics. */
export function controllerMetrics(
  m: Pick<OperatorMetrics, "reconcileDuration" | "reconcileErrors">,
  controller: string,
): { reconcileDuration: { observe(seconds: number): void }; reconcileErrors: { inc(): void } } {
  return {
    reconcileDuration: m.reconcileDuration.labels({ controller }),
    reconcileErrors: m.reconcileErrors.labels({ controller }),
  };
}

type Removable = {
  get(): Promise<{ values: Array<{ labels: Record<string, string | number> }> }>;
  remove(labels: Record<string, string | number>): void;
};

/** Removes every series of these metrics labelled with the policy. */
async function removeSeriesOf(
  policy: string,
  metrics: Array<Counter<string> | Gauge<string> | Histogram<string>>,
): Promise<void> {
  // prom-client removes only exact label sets, so find every series that carries the policy.
  for (const m of metrics as unknown as Removable[]) {
    const { values } = await m.get();
    const seen = new Set<string>();
    for (const v of values) {
      if (v.labels.policy !== policy) continue;
      const labels = Object.fromEntries(Object.entries(v.labels).filter(([k]) => k !== "le"));
      const id = JSON.stringify(labels);
      if (seen.has(id)) continue;
      seen.add(id);
      m.remove(labels);
    }
  }
}
