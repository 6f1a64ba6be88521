// Every benchmark `npm run bench -- all` runs, in order. Add new ones here.
import type { Benchmark } from "./bench.js";
import { probeBenchmark } from "./probe.js";
import { probeVsHaproxyBenchmark } from "./probe-vs-haproxy.js";
import { probeTypesBenchmark } from "./probe-types.js";
import { drainLatencyBenchmark } from "./drain-latency.js";
import { scaleBenchmark } from "./scale.js";
import { kubeletBenchmark } from "./kubelet.js";
import { debugTargetsBenchmark } from "./debug-targets.js";
import { soakBenchmark } from "./soak.js";
import { clientsBenchmark } from "./clients.js";

export const benchmarks: Benchmark[] = [
  probeBenchmark,
  probeTypesBenchmark,
  probeVsHaproxyBenchmark,
  drainLatencyBenchmark,
  kubeletBenchmark,
  debugTargetsBenchmark,
  scaleBenchmark,
  soakBenchmark,
  clientsBenchmark,
];
