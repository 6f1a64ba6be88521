// The operator command in a process of its own, exactly as deployed: `node --import tsx
// operator/src/main.ts` (tsx as a loader, so a signal reaches the operator itself, not a wrapper).
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import type { TestApiServer } from "../apiserver/index.js";
import { repoRoot } from "./paths.js";
import { waitFor } from "./wait-for.js";

export interface OperatorProcessOptions {
  /** Where the kubeconfig for `user` comes from: the API test server, or any cluster that can write one. */
  server: Pick<TestApiServer, "writeKubeconfig">;
  /** Scratch directory for the kubeconfig. */
  dir: string;
  /** Kubeconfig user (and bearer token), so the server's request log tells processes apart. */
  user?: string;
  flags?: string[];
  /** HEALTHPROBE_TEST_FAILPOINT: the process SIGKILLs itself at that point of a replacement. */
  failpoint?: "after-charge" | "after-evict";
  /** Also appends everything the process writes to this file. */
  logFile?: string;
  /** A directory holding another copy of operator/ (a scratch copy with a planted bug); default: the repository. */
  operatorRoot?: string;
}

export interface OperatorProcess {
  user: string;
  child: ChildProcess;
  /** Parsed JSON log lines. */
  logs: Array<Record<string, any>>;
  /** Everything written to stdout and stderr. */
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Waits for "operator started" and a ready /readyz; returns the identity and health port. */
  started(timeoutMs?: number): Promise<{ identity: string; healthPort: number }>;
  /** SIGTERM (or the given signal) unless it already exited, then waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function startOperatorProcess(opts: OperatorProcessOptions): OperatorProcess {
  const user = opts.user ?? "operator";
  const kubeconfig = join(opts.dir, `${user}.kubeconfig`);
  opts.server.writeKubeconfig(kubeconfig, user);
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: "" };
  delete env.HEALTHPROBE_TEST_FAILPOINT;
  if (opts.failpoint) env.HEALTHPROBE_TEST_FAILPOINT = opts.failpoint;
  const args = [
    "--import",
    "tsx",
    join(opts.operatorRoot ?? repoRoot, "operator", "src", "main.ts"),
    "--kubeconfig",
    kubeconfig,
    "--operator-namespace",
    "healthprobe-system",
    "--metrics-bind-address",
    "127.0.0.1:0",
    "--health-probe-bind-address",
    "127.0.0.1:0",
    ...(opts.flags ?? []),
  ];
  const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  const file = opts.logFile ? createWriteStream(opts.logFile, { flags: "a" }) : undefined;
  if (file) {
    child.stdout!.pipe(file, { end: false });
    child.stderr!.pipe(file, { end: false });
  }
  const logs: Array<Record<string, any>> = [];
  const output: string[] = [];
  let partial = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    const text = chunk.toString();
    output.push(text);
    partial += text;
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.trim().startsWith("{")) continue;
      try {
        logs.push(JSON.parse(line) as Record<string, any>);
      } catch {
        // A line that is not JSON is kept in `output` only.
      }
    }
  });
  child.stderr!.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  if (file) child.once("close", () => file.end());
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    user,
    child,
    logs,
    output,
    exited,
    async started(timeoutMs = 30_000) {
      const line = await waitFor(
        () => {
          if (!running()) throw new Error(`operator ${user} exited: ${output.join("").slice(-2000)}`);
          return logs.find((l) => l.msg === "operator started");
        },
        { timeoutMs, what: `operator ${user} to start` },
      );
      const healthPort = line.healthPort as number;
      await waitFor(async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status === 200, {
        timeoutMs,
        what: `operator ${user} caches synced`,
      });
      return { identity: line.identity as string, healthPort };
    },
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (running()) child.kill(signal);
      await exited;
    },
  };
}
