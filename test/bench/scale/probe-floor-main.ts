// The probe engine alone: `node --import tsx probe-floor-main.ts <port> <rate> <seconds>`, pod
// addresses one per stdin line. It probes them (scheduler and HTTP prober, a fresh connection
// each time, as the operator does) at the rate and prints one JSON line with its CPU per probe:
// what a probe costs on this machine before anything the operator adds (caches, health,
// reconciles, metrics), measured beside the operator's own figure.
import { createInterface } from "node:readline";
import { createProber } from "../../../operator/src/adapters/prober.js";
import { runProbeLoad } from "../probe-load.js";

const [port, rate, seconds] = process.argv.slice(2).map(Number);
if (!port || !rate || !seconds) throw new Error("usage: probe-floor-main.ts <port> <rate> <seconds> < addresses");
const addresses: string[] = [];
for await (const line of createInterface({ input: process.stdin })) if (line) addresses.push(line);
const r = await runProbeLoad({
  request: (i) => ({
    scheme: "HTTP",
    address: addresses[i % addresses.length]!,
    port,
    path: "/healthz",
    method: "GET",
    headers: [],
  }),
  rate,
  seconds,
  execute: createProber(),
});
process.stdout.write(
  JSON.stringify({
    cpuPerProbeUs: r.probes > 0 ? Math.round((r.cpuSeconds * 1e6) / r.probes) : null,
    probesPerSecond: Math.round(r.probes / seconds),
    failures: r.failures,
    ...(r.firstFailure ? { firstFailure: r.firstFailure } : {}),
  }) + "\n",
);
process.exit(0);
