// The probe families: probes run and their durations, and the probes in flight per namespace.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { OperatorMetrics, ProbesInFlightSource } from "./metrics.js";

export function probeMetrics(registers: Registry[]): Pick<OperatorMetrics, "probesTotal" | "probeDuration"> {
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
  return { probesTotal, probeDuration };
}

/** healthprobe_probes_in_flight, rebuilt at each scrape from the source watch() gives it. */
export function probesInFlightGauge(registers: Registry[]): {
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
