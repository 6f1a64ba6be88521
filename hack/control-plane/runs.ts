// Each running control plane owns a slot: a directory under the system's temp directory named
// after its network namespace, holding the owner's pid, the pids of the processes it started,
// etcd's data and every component's log. A slot whose owner is gone is a crashed run's
// leftover: its processes are stopped, its namespace and directory removed, and the slot reused.
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NAME_PREFIX, listNamespaces, namespaceName, removeNamespace } from "./network.js";

export const runsRoot = join(tmpdir(), "healthprobe-control-plane");

export interface RunSlot {
  slot: number;
  dir: string;
  /** Records a started process, so a later run can stop it if this one crashes. */
  recordPid(pid: number): void;
  release(): void;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

function ownerAlive(dir: string): boolean {
  const ownerFile = join(dir, "owner");
  // Just created, owner not written yet: someone is starting right now.
  if (!existsSync(ownerFile)) return Date.now() - statSync(dir).mtimeMs < 10_000;
  const pid = Number(readFileSync(ownerFile, "utf8").trim());
  return Number.isInteger(pid) && pid > 0 && alive(pid);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** Stops the processes a dead run recorded, if they still run from its directory. */
function stopRecordedProcesses(dir: string): void {
  const pidsFile = join(dir, "pids");
  if (!existsSync(pidsFile)) return;
  for (const line of readFileSync(pidsFile, "utf8").split("\n")) {
    const pid = Number(line.trim());
    if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) continue;
    // A reused pid runs something else: only a process started for that run names its directory.
    if (commandLine(pid).includes(dir)) process.kill(pid, "SIGKILL");
  }
}

/** Removes what crashed runs left behind: processes, network namespaces and directories. */
export async function cleanLeftovers(): Promise<string[]> {
  const removed: string[] = [];
  mkdirSync(runsRoot, { recursive: true });
  const live = new Set<string>();
  for (const name of readdirSync(runsRoot)) {
    if (!name.startsWith(NAME_PREFIX)) continue;
    const dir = join(runsRoot, name);
    if (ownerAlive(dir)) {
      live.add(name);
      continue;
    }
    stopRecordedProcesses(dir);
    await removeNamespace(name).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    removed.push(name);
  }
  // A namespace without a live run's directory is a leftover too. A run claims its directory before it
  // makes its namespace, so one that another run of this process (or another) claimed since the
  // directories were read is looked at again, not removed from under it.
  for (const ns of await listNamespaces()) {
    if (live.has(ns)) continue;
    const dir = join(runsRoot, ns);
    if (existsSync(dir) && ownerAlive(dir)) continue;
    await removeNamespace(ns).catch(() => undefined);
    removed.push(ns);
  }
  return removed;
}

/** Claims a free slot below `slots` (at most 250) for this process; call cleanLeftovers first. */
export function claimSlot(slots = 250): RunSlot {
  mkdirSync(runsRoot, { recursive: true });
  const start = Math.floor(Math.random() * slots);
  for (let i = 0; i < slots; i++) {
    const slot = (start + i) % slots;
    const dir = join(runsRoot, namespaceName(slot));
    try {
      mkdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw new Error(`claiming control plane slot ${dir}`, { cause: err });
    }
    writeFileSync(join(dir, "owner"), `${process.pid}\n`);
    return {
      slot,
      dir,
      recordPid: (pid) => appendFileSync(join(dir, "pids"), `${pid}\n`),
      release: () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  throw new Error(`no free control plane slot below ${slots} in ${runsRoot}: that many runs are live`);
}
