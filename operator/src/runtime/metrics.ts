// Prometheus metrics on a private registry, so tests and multiple instances never collide
// through prom-client's global default registry.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { ProbeFailureKind } from "../domain/probe-request.js";
import { controllerFamilies } from "./controller-metrics.js";
import { probeMetrics, probesInFlightGauge } from "./probe-metrics.js";
import { replacementMetrics } from "./replacement-metrics.js";
import { targetMetrics } from "./target-metrics.js";

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
  // Registered in this order, which is the order of the exposition.
  const probes = probeMetrics(registers);
  const targets = targetMetrics(registers);
  const replacements = replacementMetrics(registers);
  const controllers = controllerFamilies(registers);
  const inFlight = probesInFlightGauge(registers);

  return {
    registry,
    ...probes,
    ...targets,
    ...replacements,
    ...controllers,
    probesInFlight: inFlight.gauge,
    watchProbesInFlight: inFlight.watch,
    recordProbe(policy, outcome, durationSeconds) {
      const { probesTotal, probeDuration } = probes;
      probesTotal.inc({ policy, result: outcome.ok ? "success" : "failure", class: outcome.ok ? "" : outcome.class });
      probeDuration.observe({ policy }, durationSeconds);
    },
    forgetPolicy: (policy) =>
      removeSeriesOf(policy, [
        probes.probesTotal,
        probes.probeDuration,
        targets.targets,
        targets.drainedTargets,
        targets.quarantinedTargets,
        targets.kubeletDisagreements,
        replacements.replacementsTotal,
        replacements.replacementBudgetRemaining,
      ]),
  };
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

export interface ShardGaugeSource {
  identity: string;
  namespacesOwned(): number;
  targetsOwned(): number;
  liveReplicas(): number;
}

/**
 * With shards on, what this replica owns, read at each scrape: healthprobe_shard_namespaces_owned,
 * healthprobe_shard_targets_owned and healthprobe_shard_replicas_live, labelled with its identity
 * so series scraped from several replicas stay apart.
 */
export function registerShardGauges(registry: Registry, source: ShardGaugeSource): void {
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["replica"] as const,
      registers: [registry],
      collect() {
        this.set({ replica: source.identity }, read());
      },
    });
  gauge(
    "healthprobe_shard_namespaces_owned",
    "Namespaces this replica acts on now (shards on).",
    source.namespacesOwned,
  );
  gauge(
    "healthprobe_shard_targets_owned",
    "Pods this replica probes now, over the policies of the namespaces it owns (shards on).",
    source.targetsOwned,
  );
  gauge(
    "healthprobe_shard_replicas_live",
    "Replicas whose shard Lease is live, as this replica last read them (shards on).",
    source.liveReplicas,
  );
}
