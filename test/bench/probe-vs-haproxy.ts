// `probe-vs-haproxy [--rate 1000] [--seconds 10] [--rounds 3] [--variants net,...|all]`: CPU per probe of the
// engine against HAProxy's `option httpchk` health checks, same local target, same rate, one
// fresh connection per check. HAProxy's CPU comes from /proc/<pid>/stat over the same length of
// window. Runs one after the other so they do not compete for the cores. Beside the engine, by
// default, net-floor: the least a fresh connection costs through node:net (probe-variants.ts).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Benchmark } from "./bench.js";
import { batchFlag, FlagError, numberFlags } from "./flags.js";
import { runProbeLoad } from "./probe-load.js";
import { findBinary, freePort, startTarget, type ProbeTarget } from "./probe-target.js";
import { PROBE_VARIANTS } from "./probe-variants.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function clockTicksPerSecond(): number {
  const r = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  const n = Number(r.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
}

/** utime + stime of a process, in seconds. */
function processCpuSeconds(pid: number, ticks: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

function ensureHaproxy(): string | undefined {
  const found = findBinary("haproxy");
  if (found) return found;
  console.error("haproxy is not installed: trying `apt-get install -y haproxy`");
  const r = spawnSync("apt-get", ["install", "-y", "haproxy"], {
    stdio: ["ignore", "ignore", "inherit"],
    timeout: 300_000,
  });
  if (r.status !== 0) return undefined;
  return findBinary("haproxy");
}

async function measureHaproxy(
  binary: string,
  target: ProbeTarget,
  rate: number,
  seconds: number,
): Promise<{ cpuSeconds: number; checks: number | undefined }> {
  // N servers on the same target, each checked every N/rate seconds: `rate` checks a second.
  const servers = Math.max(1, Math.round(rate));
  const interMs = Math.round((servers / rate) * 1000);
  const dir = mkdtempSync(join(tmpdir(), "hp-bench-haproxy-"));
  // HAProxy refuses to start without a listener; this one receives no traffic.
  const listenPort = await freePort();
  const lines = [
    "global",
    "  nbthread 1",
    "  maxconn 8192",
    "defaults",
    "  mode http",
    "  timeout connect 1s",
    "  timeout client 5s",
    "  timeout server 5s",
    "  timeout check 1s",
    "frontend idle",
    `  bind 127.0.0.1:${listenPort}`,
    "  default_backend probes",
    "backend probes",
    "  option httpchk",
    `  http-check send meth GET uri ${new URL(target.url).pathname} ver HTTP/1.1 hdr Host 127.0.0.1`,
    "  http-check expect status 200",
    `  default-server check inter ${interMs}ms fall 3 rise 1`,
    ...Array.from({ length: servers }, (_, i) => `  server s${i} 127.0.0.1:${target.port}`),
  ];
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(cfg, `${lines.join("\n")}\n`);
  const child: ChildProcess = spawn(binary, ["-db", "-f", cfg], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  try {
    const ticks = clockTicksPerSecond();
    await sleep(2000 + interMs); // every server checked at least once before the window
    if (child.exitCode !== null || !child.pid) throw new Error(`haproxy exited: ${stderr}`);
    const r0 = await target.requests();
    const c0 = processCpuSeconds(child.pid, ticks);
    await sleep(seconds * 1000);
    const c1 = processCpuSeconds(child.pid, ticks);
    const r1 = await target.requests();
    return { cpuSeconds: c1 - c0, checks: r0 !== undefined && r1 !== undefined ? r1 - r0 - 1 : undefined };
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : Math.round((((s[mid - 1] as number) + (s[mid] as number)) / 2) * 10) / 10;
}

const us = (cpuSeconds: number, probes: number) => (probes > 0 ? Math.round((cpuSeconds / probes) * 1e7) / 10 : NaN);

export const probeVsHaproxyBenchmark: Benchmark = {
  name: "probe-vs-haproxy",
  description: "CPU per probe of the engine vs HAProxy httpchk health checks, same target and rate",
  usage: `probe-vs-haproxy [--rate 1000] [--seconds 10] [--rounds 3] [--batch-ms 20] [--variants net|all|${Object.keys(PROBE_VARIANTS).join(",")}]`,
  async run(args) {
    const flags = numberFlags(args, { rate: 1000, seconds: 10, rounds: 3 }, ["variants", "batch-ms"]);
    const batchMs = batchFlag(flags.strings["batch-ms"]);
    const wanted = flags.strings.variants ?? "net,net-floor";
    const variants = wanted === "all" ? Object.keys(PROBE_VARIANTS) : wanted.split(",");
    for (const v of variants)
      if (!PROBE_VARIANTS[v])
        throw new FlagError(
          `--variants: unknown ${JSON.stringify(v)}; known: ${Object.keys(PROBE_VARIANTS).join(", ")}`,
        );
    const haproxy = ensureHaproxy();
    if (!haproxy) {
      console.log(JSON.stringify({ skipped: "haproxy is not installed and `apt-get install -y haproxy` failed" }));
      return 0;
    }
    const target = await startTarget();
    try {
      // Rounds alternate HAProxy and each variant, so drift in machine load hits both; the
      // figures reported are the per-round medians.
      const haproxyRuns: Array<{ checks: number; counted: boolean; cpuSeconds: number; us: number }> = [];
      const runs = new Map<
        string,
        Array<{ probes: number; failures: number; cpuSeconds: number; us: number; firstFailure?: string }>
      >();
      for (let round = 0; round < flags.rounds; round++) {
        const h = await measureHaproxy(haproxy, target, flags.rate, flags.seconds);
        const checks = h.checks ?? Math.round(flags.rate * flags.seconds);
        haproxyRuns.push({
          checks,
          counted: h.checks !== undefined,
          cpuSeconds: h.cpuSeconds,
          us: us(h.cpuSeconds, checks),
        });
        for (const v of variants) {
          const r = await runProbeLoad({
            url: target.url,
            rate: flags.rate,
            seconds: flags.seconds,
            execute: (PROBE_VARIANTS[v] as () => never)(),
            ...(batchMs !== undefined ? { batchMs } : {}),
            targetRequests: () => target.requests(),
          });
          const row = {
            probes: r.probes,
            failures: r.failures,
            cpuSeconds: r.cpuSeconds,
            us: us(r.cpuSeconds, r.probes),
            ...(r.firstFailure ? { firstFailure: r.firstFailure } : {}),
          };
          runs.set(v, [...(runs.get(v) ?? []), row]);
        }
      }
      const haproxyUs = median(haproxyRuns.map((r) => r.us));
      const rows = variants.map((v) => {
        const rs = runs.get(v) ?? [];
        const ours = median(rs.map((r) => r.us));
        return {
          variant: v,
          probes: rs.reduce((a, r) => a + r.probes, 0),
          failures: rs.reduce((a, r) => a + r.failures, 0),
          cpuPerProbeUs: ours,
          perRoundUs: rs.map((r) => r.us),
          ratioToHaproxy: Math.round((ours / haproxyUs) * 100) / 100,
          ...(rs.find((r) => r.firstFailure) ? { firstFailure: rs.find((r) => r.firstFailure)?.firstFailure } : {}),
        };
      });
      const net = rows.find((r) => r.variant === "net") ?? rows[0];
      const floor = rows.find((r) => r.variant === "net-floor");
      console.log(
        JSON.stringify({
          target: target.kind,
          rate: flags.rate,
          seconds: flags.seconds,
          rounds: flags.rounds,
          batchMs: batchMs ?? "scheduler default",
          haproxy: {
            checks: haproxyRuns.reduce((a, r) => a + r.checks, 0),
            checksCounted: haproxyRuns.every((r) => r.counted),
            cpuPerProbeUs: haproxyUs,
            perRoundUs: haproxyRuns.map((r) => r.us),
          },
          ours: net,
          ratio: net?.ratioToHaproxy,
          // What node:net itself costs per fresh connection, and how far the engine is above it.
          ...(floor
            ? {
                floorUs: floor.cpuPerProbeUs,
                floorRatio: floor.ratioToHaproxy,
                overFloorUs: net ? Math.round((net.cpuPerProbeUs - floor.cpuPerProbeUs) * 10) / 10 : undefined,
              }
            : {}),
          ...(rows.length > 1 ? { variants: rows } : {}),
        }),
      );
    } finally {
      await target.stop();
    }
    return 0;
  },
};
