// `probe --url <http-url> --rate <probes/s> --seconds <n> [--variant net]`: the probe engine at a
// fixed rate with a fresh connection per probe. Without --url it starts its own local target.
import type { Benchmark } from "./bench.js";
import { batchFlag, FlagError, numberFlags } from "./flags.js";
import { runProbeLoad } from "./probe-load.js";
import { startTarget } from "./probe-target.js";
import { PROBE_VARIANTS } from "./probe-variants.js";

export const probeBenchmark: Benchmark = {
  name: "probe",
  description: "CPU and latency of the probe engine at a fixed rate, fresh connection per probe",
  usage: `probe [--url http://127.0.0.1:PORT/path] [--rate 1000] [--seconds 10] [--batch-ms 20] [--variant ${Object.keys(PROBE_VARIANTS).join("|")}]`,
  async run(args) {
    const flags = numberFlags(args, { rate: 1000, seconds: 10 }, ["url", "variant", "batch-ms"]);
    const batchMs = batchFlag(flags.strings["batch-ms"]);
    const variant = flags.strings.variant ?? "net";
    const make = PROBE_VARIANTS[variant];
    if (!make)
      throw new FlagError(`--variant: ${JSON.stringify(variant)}: known: ${Object.keys(PROBE_VARIANTS).join(", ")}`);
    const target = flags.strings.url ? undefined : await startTarget();
    try {
      const result = await runProbeLoad({
        url: flags.strings.url ?? (target as NonNullable<typeof target>).url,
        rate: flags.rate,
        seconds: flags.seconds,
        execute: make(),
        ...(batchMs !== undefined ? { batchMs } : {}),
        ...(target ? { targetRequests: () => target.requests() } : {}),
      });
      console.log(JSON.stringify({ ...result, variant, ...(target ? { target: target.kind } : {}) }));
    } finally {
      await target?.stop();
    }
  },
};
