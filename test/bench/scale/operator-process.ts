// The operator run as its image runs it: compiled with tsc into dist/, then plain `node
// dist/main.js` in a child process of its own, so its memory and CPU can be read from /proc.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createWriteStream, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { repoRoot } from "../../support/paths.js";
import { waitFor } from "../../support/wait-for.js";

export interface OperatorProcess {
  pid: number;
  /** The identity it logged at start (its shard Lease's holder with --shards=on). */
  identity: string;
  metricsUrl: string;
  debugUrl: string;
  /** Log lines the operator wrote so far. */
  logLines(): number;
  /** The last log lines, for an error message. */
  tail(): string[];
  /** SIGTERM, then SIGKILL after graceMs; resolves with the ms until exit and whether it had to be killed. */
  stop(graceMs?: number): Promise<{ ms: number; killed: boolean }>;
  /** SIGKILL, as a replica dies: resolves once it has exited. */
  kill(): Promise<void>;
}

export const profileDir = (): string | undefined => process.env.HEALTHPROBE_BENCH_CPU_PROF || undefined;

/** Compiles the operator as the image build does. */
export function buildOperator(): void {
  const r = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json"], {
    cwd: repoRoot,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.status !== 0)
    throw new Error(`building the operator (npx tsc -p tsconfig.build.json) failed with exit code ${r.status}`);
}

/**
 * Starts `node <entry>` (default the image's `dist/main.js`; a test may run the sources through
 * tsx instead); every line it logs goes to logPath.
 */
export async function startOperatorProcess(
  kubeconfigPath: string,
  logPath: string,
  entry: string[] = [join("dist", "main.js")],
  flags: string[] = [],
): Promise<OperatorProcess> {
  const logFile = createWriteStream(logPath);
  // HEALTHPROBE_BENCH_CPU_PROF=<dir>: each operator profiles the quiet window (quiet-profiler.mjs).
  const args = [
    ...(profileDir() ? ["--import", join(repoRoot, "test", "bench", "scale", "quiet-profiler.mjs")] : []),
    ...entry,
    "--kubeconfig",
    kubeconfigPath,
    "--metrics-bind-address",
    "127.0.0.1:0",
    "--health-probe-bind-address",
    "127.0.0.1:0",
    "--insecure-diagnostics",
    ...flags,
  ];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_ENV: "production" },
  });
  // A benchmark that dies must not leave its operator running.
  const killOnExit = () => child.kill();
  process.once("exit", killOnExit);
  const tail: string[] = [];
  let lines = 0;
  let ports: { health: number; metrics: number; identity: string } | undefined;
  const onLine = (line: string) => {
    lines++;
    logFile.write(line + "\n");
    tail.push(line);
    if (tail.length > 40) tail.shift();
    if (ports || !line.includes("operator started")) return;
    try {
      const entry = JSON.parse(line) as { healthPort?: number; metricsPort?: number; identity?: string };
      if (entry.healthPort && entry.metricsPort)
        ports = { health: entry.healthPort, metrics: entry.metricsPort, identity: entry.identity ?? "" };
    } catch {
      // not a JSON log line
    }
  };
  createInterface({ input: child.stdout! }).on("line", onLine);
  createInterface({ input: child.stderr! }).on("line", onLine);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const found = await waitFor(() => ports ?? (child.exitCode !== null ? "exited" : undefined), {
    what: "the operator's ports in its log",
    timeoutMs: 60_000,
  });
  if (found === "exited") throw new Error(`the operator exited with code ${child.exitCode}:\n${tail.join("\n")}`);
  return {
    pid: child.pid!,
    identity: found.identity,
    metricsUrl: `http://127.0.0.1:${found.metrics}/metrics`,
    debugUrl: `http://127.0.0.1:${found.health}/debug/targets`,
    logLines: () => lines,
    tail: () => [...tail],
    async stop(graceMs = 30_000) {
      const started = Date.now();
      let killed = false;
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => {
        killed = true;
        child.kill("SIGKILL");
      }, graceMs);
      await exited;
      clearTimeout(timer);
      process.off("exit", killOnExit);
      await new Promise((resolve) => logFile.end(resolve));
      return { ms: Date.now() - started, killed };
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      process.off("exit", killOnExit);
      await new Promise((resolve) => logFile.end(resolve));
    },
  };
}

/** Resident and peak resident memory of a process in bytes (Linux /proc). */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** CPU time in ms of each of a process's threads, summed by thread name (Linux /proc): the main thread against V8's and libuv's workers. */
export function threadCpuMsOf(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended
    }
    const name = tid === String(pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).trim();
    out[name] = (out[name] ?? 0) + cpuMsInStat(stat);
  }
  return out;
}

/** Times a process's main thread went to sleep waiting (voluntary context switches, Linux /proc): its event loop's wake-ups. */
export function wakeupsOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, "utf8");
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
}

/** User plus system CPU time of a process in ms (Linux /proc, clock ticks of 10 ms). */
export function cpuMsOf(pid: number): number {
  return cpuMsInStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

/** User plus system CPU time in ms of a process's or thread's stat line (clock ticks of 10 ms). */
function cpuMsInStat(stat: string): number {
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
