// The operator command in a process of its own, exactly as deployed: `node --import tsx
// operator/src/main.ts` (tsx as a loader, so a signal reaches the operator itself, not a wrapper).
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import type { TestApiServer } from "../../hack/apiserver/index.js";
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
  /**
   * A network namespace (/run/netns/…) to run the process in, through nsenter (which execs, so the
   * child is the operator itself): on the real node only its namespace reaches pod addresses.
   */
  netns?: string;
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

/** Whether /readyz answers 200, asked from the operator's own network namespace. */
async function readyz(port: number, netns: string | undefined): Promise<boolean> {
  const url = `http://127.0.0.1:${port}/readyz`;
  if (!netns) return (await fetch(url)).status === 200;
  return new Promise((resolve) => {
    const curl = spawn("nsenter", [`--net=${netns}`, "--", "curl", "-sf", "-o", "/dev/null", "-m", "2", url], {
      stdio: "ignore",
    });
    curl.once("error", () => resolve(false));
    curl.once("exit", (code) => resolve(code === 0));
  });
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
  const [cmd, argv]: [string, string[]] = opts.netns
    ? ["nsenter", [`--net=${opts.netns}`, "--", process.execPath, ...args]]
    : [process.execPath, args];
  const child = spawn(cmd, argv, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
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
      await waitFor(() => readyz(healthPort, opts.netns), {
        timeoutMs,
        intervalMs: opts.netns ? 500 : 100,
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
