// Child processes of the control plane: each writes its output to a log file in the run
// directory, is recorded for crash clean-up, and is stopped with SIGTERM, then SIGKILL.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunSlot } from "./runs.js";

const here = dirname(fileURLToPath(import.meta.url));

export interface Component {
  name: string;
  logFile: string;
  /** How it was started, so it can be started again the same way (restart in chaos tests). */
  bin: string;
  args: string[];
  /** Sends the signal (SIGKILL: a crash) and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** The last lines of its log, for error messages. */
  tail(lines?: number): string;
  exited(): boolean;
  stop(): Promise<void>;
}

export function startComponent(slot: RunSlot, name: string, bin: string, args: string[]): Component {
  const logFile = join(slot.dir, `${name}.log`);
  const fd = openSync(logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(bin, args, { stdio: ["ignore", fd, fd], cwd: slot.dir });
  } finally {
    closeSync(fd);
  }
  if (child.pid) slot.recordPid(child.pid);
  let done = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", () => (done = true));
  child.once("error", () => (done = true));
  const tail = (lines = 20): string => {
    try {
      return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  };
  return {
    name,
    logFile,
    bin,
    args,
    kill: async (signal) => {
      if (done) return;
      child.kill(signal);
      await exit;
    },
    tail,
    exited: () => done,
    stop: async () => {
      if (done) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** A TCP port free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export class GoMissingError extends Error {}

/**
 * The directory holding kube-apiserver, kube-controller-manager and etcd: HEALTHPROBE_CONTROL_PLANE_BIN
 * when set, otherwise what build.sh builds or finds in its cache. Throws GoMissingError without Go.
 */
export function controlPlaneBinaries(): string {
  const fromEnv = process.env.HEALTHPROBE_CONTROL_PLANE_BIN;
  if (fromEnv) return fromEnv;
  const out = spawnSync("bash", [join(here, "build.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (out.status === 3)
    throw new GoMissingError(
      "Go is not installed: the real control plane cannot be built (see hack/control-plane/build.sh)",
    );
  if (out.status !== 0)
    throw new Error(`hack/control-plane/build.sh failed with exit status ${out.status ?? out.signal}`);
  return out.stdout.trim().split("\n").pop()!;
}

/** Resolves at the first Ctrl-C (SIGINT to the process group) or SIGTERM: what a run waits on before it stops. */
export function interrupted(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}
