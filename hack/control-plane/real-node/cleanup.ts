// Removes everything a real-node run made outside its processes' memory: processes whose command
// line names the run's directory (containerd's shims and pods included), the run's cgroups in
// every cgroup v1 hierarchy, the pods' network namespaces made by CNI (recognised by their veth's
// peer living in the node's namespace), mounts under the run's directory, and containerd's files
// outside it (outside-run.ts). It is used by stop() and, for a crashed run, by the next start (a
// `real-node` marker file in the run's directory).
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { runsRoot } from "../runs.js";
import { removeOutsideRun } from "./outside-run.js";

const run = promisify(execFile);
export const MARKER = "real-node";
const CGROUP_ROOT = "/sys/fs/cgroup";

const processesNaming = (dir: string): number[] =>
  readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);

const kill = (pid: number): void => {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone already.
  }
};

/** Cgroup directories of the run (deepest first), in every hierarchy. */
function cgroupDirs(name: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
    out.push(dir);
  };
  for (const h of readdirSync(CGROUP_ROOT)) {
    const dir = join(CGROUP_ROOT, h, name);
    if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
  }
  return out;
}

async function removeCgroups(name: string): Promise<void> {
  for (let round = 0; round < 50; round++) {
    const dirs = cgroupDirs(name);
    if (dirs.length === 0) return;
    for (const d of dirs) {
      for (const pid of readFileSync(join(d, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) kill(Number(pid));
    }
    for (const d of dirs) {
      try {
        rmdirSync(d);
      } catch {
        // Still has processes dying in it: the next round retries.
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`cgroups of ${name} would not go: ${cgroupDirs(name).join(", ")}`);
}

/** CNI's pod namespaces whose interfaces pair with the node's namespace (cni-…). */
export async function podNamespaces(nodeNs: string): Promise<string[]> {
  if (!existsSync("/run/netns")) return [];
  const out: string[] = [];
  for (const ns of readdirSync("/run/netns").filter((n) => n.startsWith("cni-"))) {
    const links = await run("ip", ["-n", ns, "link", "show"]).then(
      (r) => r.stdout,
      () => "",
    );
    if (links.includes(`link-netns ${nodeNs}`)) out.push(ns);
  }
  return out;
}

/**
 * The pod namespaces still paired with the node's, and those the run saw before it stopped: once
 * CNI has removed a pod's veth, nothing pairs its namespace with the node's any more, and a
 * containerd stopped before it deleted the namespace leaves it behind.
 */
async function removePodNamespaces(nodeNs: string, seen: readonly string[]): Promise<void> {
  for (const ns of new Set([...(await podNamespaces(nodeNs)), ...seen]))
    if (existsSync(join("/run/netns", ns))) await run("ip", ["netns", "del", ns]).catch(() => undefined);
}

async function unmountUnder(dir: string): Promise<void> {
  const points = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .filter((p) => p === dir || p.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const p of points) await run("umount", ["-l", p]).catch(() => undefined);
}

/** Everything but the node's namespace and the directory itself (runs.ts removes those); `podNetns`: the pod namespaces seen before the stop. */
export async function cleanRun(dir: string, nodeNs: string, podNetns: readonly string[] = []): Promise<void> {
  for (let round = 0; round < 3; round++) processesNaming(dir).forEach(kill);
  await removePodNamespaces(nodeNs, podNetns);
  await removeCgroups(nodeNs);
  await unmountUnder(dir);
  removeOutsideRun(dir);
}

const ownerAlive = (dir: string): boolean => {
  try {
    process.kill(Number(readFileSync(join(dir, "owner"), "utf8").trim()), 0);
    return true;
  } catch {
    return false;
  }
};

/** For crashed real-node runs: cleans what runs.ts's cleanLeftovers does not know of. Call before it. */
export async function cleanRealNodeLeftovers(): Promise<void> {
  if (!existsSync(runsRoot)) return;
  for (const name of readdirSync(runsRoot)) {
    const dir = join(runsRoot, name);
    if (existsSync(join(dir, MARKER)) && !ownerAlive(dir)) await cleanRun(dir, name);
  }
}
