// What a real-node run left on the machine: taken while it runs (its pods' network namespaces and
// containerd's IDs are known only then), checked after it stopped or after the next start.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { outsideRunLeftovers, runIds } from "../../hack/control-plane/real-node/outside-run.js";

const run = promisify(execFile);

export interface RunTrace {
  readonly dir: string;
  readonly nodeNs: string;
  /** CNI's network namespaces of the run's pods (cni-…). */
  readonly podNetns: string[];
  readonly ids: Set<string>;
}

const netnsList = async (): Promise<string[]> =>
  (await run("ip", ["netns", "list"])).stdout
    .split("\n")
    .map((l) => l.split(" ")[0]!)
    .filter(Boolean);

export async function traceRun(dir: string, nodeNs: string): Promise<RunTrace> {
  const podNetns: string[] = [];
  for (const ns of (await netnsList()).filter((n) => n.startsWith("cni-"))) {
    const links = await run("ip", ["-n", ns, "link", "show"]).then(
      (r) => r.stdout,
      () => "",
    );
    if (links.includes(`link-netns ${nodeNs}`)) podNetns.push(ns);
  }
  return { dir, nodeNs, podNetns, ids: runIds(dir) };
}

function processesNaming(dir: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .flatMap((p) => {
      try {
        const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8");
        return cmd.includes(dir) ? [`process ${p}: ${cmd.replaceAll("\0", " ").slice(0, 120)}`] : [];
      } catch {
        return [];
      }
    });
}

/** Everything of the run still on the machine, one line each; empty when nothing is left. */
export async function leftovers(t: RunTrace): Promise<string[]> {
  const out: string[] = [];
  const netns = await netnsList();
  for (const ns of [t.nodeNs, ...t.podNetns]) if (netns.includes(ns)) out.push(`network namespace ${ns}`);
  out.push(...processesNaming(t.dir));
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const point = line.split(" ")[4] ?? "";
    if (point === t.dir || point.startsWith(`${t.dir}/`) || t.podNetns.some((ns) => point === `/run/netns/${ns}`))
      out.push(`mount ${point}`);
  }
  for (const h of readdirSync("/sys/fs/cgroup")) {
    if (existsSync(join("/sys/fs/cgroup", h, t.nodeNs))) out.push(`cgroup ${h}/${t.nodeNs}`);
  }
  // The pods' veths and the CNI bridge live in the removed namespaces; none may show up here.
  const hostLinks = (await run("ip", ["-o", "link", "show"])).stdout.split("\n");
  out.push(
    ...hostLinks
      .filter((l) => l.includes(`link-netns ${t.nodeNs}`) || l.includes("hpcni0"))
      .map((l) => `host link ${l.slice(0, 80)}`),
  );
  out.push(...outsideRunLeftovers(t.dir, t.ids).map((p) => `file ${p}`));
  if (existsSync(t.dir)) out.push(`directory ${t.dir}`);
  return out;
}
