// What a real-node run's containerd leaves outside the run's directory, found from the sandbox and
// container IDs under it: a shim killed rather than stopped keeps its socket in /run/containerd/s
// (the path is fixed in containerd), and CNI's result cache lives in /var/lib/cni/results (go-cni
// has no setting for it). Both are named after IDs of this run only, so another containerd on the
// machine keeps its own.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, rmdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";

const SHIM_SOCKETS = "/run/containerd/s";
const CNI_RESULTS = "/var/lib/cni/results";
// Emptied parents go too, deepest first; ones holding anything else stay.
const PARENTS = [
  SHIM_SOCKETS,
  "/run/containerd/runc/k8s.io",
  "/run/containerd/runc",
  "/run/containerd",
  CNI_RESULTS,
  "/var/lib/cni",
];
const ID = /^[0-9a-f]{64}$/;

/** Sandbox and container IDs under containerd's root and state directories of the run. */
export function runIds(dir: string): Set<string> {
  const ids = new Set<string>();
  const walk = (d: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      if (ID.test(e.name)) ids.add(e.name);
      else if (depth > 0) walk(join(d, e.name), depth - 1);
    }
  };
  for (const sub of ["state", "root"]) walk(join(dir, "containerd", sub), 3);
  return ids;
}

const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");

/** Paths outside the run's directory that belong to it (existing or not). */
function candidates(dir: string, ids: Set<string>): string[] {
  const address = join(dir, "containerd", "containerd.sock");
  const out: string[] = [];
  for (const id of ids) {
    // containerd's shim.SocketAddress: sha256 of "<containerd address>/<namespace>/<id>[/debug]".
    out.push(
      join(SHIM_SOCKETS, sha256(join(address, "k8s.io", id))),
      join(SHIM_SOCKETS, sha256(join(address, "k8s.io", id, "debug"))),
    );
  }
  if (existsSync(CNI_RESULTS)) {
    // libcni's cache: <network>-<container id>-<interface>.
    for (const f of readdirSync(CNI_RESULTS))
      if ([...ids].some((id) => f.includes(`-${id}-`))) out.push(join(CNI_RESULTS, f));
  }
  return out;
}

/** What of the run is still outside its directory: for tests that check nothing is left. */
export function outsideRunLeftovers(dir: string, ids = runIds(dir)): string[] {
  return candidates(dir, ids).filter((p) => existsSync(p));
}

export function removeOutsideRun(dir: string, ids = runIds(dir)): void {
  for (const p of candidates(dir, ids)) rmSync(p, { force: true });
  for (const p of PARENTS) {
    try {
      if (statSync(p).isDirectory()) rmdirSync(p);
    } catch {
      // Missing, or holds someone else's files.
    }
  }
}
