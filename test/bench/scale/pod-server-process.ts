// Runs the pod server (pod-server-main.ts) in a child process and talks to it over stdio.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { repoRoot } from "../../support/paths.js";

export interface PodServerProcess {
  port: number;
  pid: number;
  setFailing(ips: Iterable<string>): Promise<void>;
  served(): Promise<{ ok: number; failing: number; foreign: number }>;
  close(): Promise<void>;
}

/**
 * Starts the pod server on this host, or with `netns` inside that network namespace (`ip netns
 * exec`), with `marker` on its command line so a crashed run's leftover can be recognised.
 */
export async function startPodServerProcess(
  podCidr: string,
  netns?: { namespace: string; marker: string },
): Promise<PodServerProcess> {
  const main = fileURLToPath(new URL("./pod-server-main.ts", import.meta.url));
  const node = [process.execPath, "--import", "tsx", main, podCidr, ...(netns ? [netns.marker] : [])];
  const [cmd, ...args] = netns ? ["ip", "netns", "exec", netns.namespace, ...node] : node;
  const child = spawn(cmd!, args, { cwd: repoRoot, stdio: ["pipe", "pipe", "inherit"] });
  process.once("exit", () => child.kill());
  const replies: Array<(line: string) => void> = [];
  const lines = createInterface({ input: child.stdout });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const first = new Promise<string>((resolve, reject) => {
    replies.push(resolve);
    child.once("exit", (code) => reject(new Error(`the pod server exited with code ${code} before listening`)));
  });
  lines.on("line", (line) => replies.shift()?.(line));
  const ask = (line: string) =>
    new Promise<string>((resolve) => {
      replies.push(resolve);
      child.stdin.write(line + "\n");
    });
  const { port } = JSON.parse(await first) as { port: number };
  return {
    port,
    pid: child.pid!,
    setFailing: async (ips) => void (await ask(JSON.stringify([...ips]))),
    served: async () => JSON.parse(await ask("served")) as { ok: number; failing: number; foreign: number },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}

/** CPU per probe of the probe engine alone against the pod server, in a process of its own (probe-floor-main.ts). */
export async function measureProbeFloor(
  port: number,
  addresses: readonly string[],
  rate: number,
  seconds: number,
): Promise<{ cpuPerProbeUs: number | null; probesPerSecond: number; failures: number }> {
  const main = fileURLToPath(new URL("./probe-floor-main.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", main, String(port), String(rate), String(seconds)], {
    cwd: repoRoot,
    stdio: ["pipe", "pipe", "inherit"],
  });
  child.stdin.end(addresses.join("\n") + "\n");
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += String(d)));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`the probe floor measurement exited with code ${code}`);
  return JSON.parse(out.trim()) as { cpuPerProbeUs: number | null; probesPerSecond: number; failures: number };
}
