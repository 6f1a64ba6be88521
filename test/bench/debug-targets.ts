// `debug-targets [--targets 50000] [--limit 10000]`: what one /debug/targets page costs the
// operator's event loop. A health server (access check off) over that many targets shaped as the
// health store lists them; one page of `--limit` entries is fetched over HTTP, and a 1 ms timer
// measures the longest the loop went without running it meanwhile. For comparison, the time of
// one synchronous JSON.stringify of the whole list (what the endpoint did before it was paged and
// chunked). One JSON line.
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { OPEN_GUARD } from "../../operator/src/runtime/endpoint-guard.js";
import { startHealthServer } from "../../operator/src/runtime/health-server.js";
import type { Benchmark } from "./bench.js";
import { FlagError } from "./flags.js";

function target(i: number) {
  const at = new Date(Date.UTC(2026, 11, 1, 10, 0, 0, i % 1000)).toISOString();
  return {
    policy: `tenant-${i % 50}/web`,
    pod: `web-${i}`,
    uid: `0000${i}`.slice(-6) + "-uid",
    ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    state: i % 10 === 0 ? "Unhealthy" : "Healthy",
    since: at,
    consecutiveSuccesses: i % 7,
    consecutiveFailures: 0,
    lastProbeAt: at,
    latencyMs: 3,
    result: "HTTP 200",
  };
}

function intFlag(name: string, raw: string | undefined, fallback: number, max: number): number {
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new FlagError(`--${name}: ${JSON.stringify(raw)}: must be a whole number from 1 to ${max}`);
  return n;
}

async function run(args: string[]): Promise<void> {
  let values: { targets?: string; limit?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: { targets: { type: "string" }, limit: { type: "string" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  const count = intFlag("targets", values.targets, 50_000, 1_000_000);
  const limit = intFlag("limit", values.limit, 10_000, 10_000);
  const targets = Array.from({ length: count }, (_, i) => target(i));

  const t0 = performance.now();
  const whole = JSON.stringify({ targets });
  const wholeStringifyMs = performance.now() - t0;

  const server = (await startHealthServer({
    address: { disabled: false, host: "127.0.0.1", port: 0 },
    isReady: () => true,
    debugTargets: () => ({ targets }),
    guard: OPEN_GUARD,
  }))!;
  let last = performance.now();
  let longestStallMs = 0;
  const beat = setInterval(() => {
    const now = performance.now();
    longestStallMs = Math.max(longestStallMs, now - last);
    last = now;
  }, 1);
  try {
    const start = performance.now();
    const res = await fetch(`http://127.0.0.1:${server.port}/debug/targets?limit=${limit}`);
    const body = await res.text();
    const pageMs = performance.now() - start;
    const page = JSON.parse(body) as { targets: unknown[]; truncated: boolean };
    console.log(
      JSON.stringify({
        benchmark: "debug-targets",
        targets: count,
        limit,
        pageEntries: page.targets.length,
        truncated: page.truncated,
        pageBytes: body.length,
        pageMs: Math.round(pageMs),
        longestStallMs: Math.round(longestStallMs),
        wholeListBytes: whole.length,
        wholeStringifyMs: Math.round(wholeStringifyMs),
      }),
    );
  } finally {
    clearInterval(beat);
    await server.close();
  }
}

export const debugTargetsBenchmark: Benchmark = {
  name: "debug-targets",
  description: "one /debug/targets page over many targets: its time and the longest event-loop stall meanwhile",
  usage: "debug-targets [--targets 50000] [--limit 10000]",
  run,
};
