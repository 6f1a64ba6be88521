// The kubelet sets six machine-wide kernel tunables when it starts (vm.overcommit_memory=1,
// kernel.panic=10, kernel.panic_on_oops=1, ...) unless they already hold its values, and
// protectKernelDefaults only turns that into a refusal to start. So the real node's kubelet runs
// in a mount namespace of its own where those /proc/sys files are bind mounts of files holding
// its values: it reads what it wants and writes nothing to the machine. Its root directory is a
// shared mount first, so the volumes it mounts there still reach containerd and runc, which run
// in the machine's mount namespace.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// pkg/kubelet/cm's setupKernelTunables, as of v1.37.
const KUBELET_TUNABLES: Record<string, number> = {
  "vm/overcommit_memory": 1,
  "vm/panic_on_oom": 0,
  "kernel/panic": 10,
  "kernel/panic_on_oops": 1,
  "kernel/keys/root_maxkeys": 1000000,
  "kernel/keys/root_maxbytes": 25000000,
};

/** Bind-mounts `dir` on itself as a shared mount (the run's clean-up unmounts everything under it). */
export function makeSharedMount(dir: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["--bind", dir, dir]);
  execFileSync("mount", ["--make-shared", dir]);
}

/**
 * The command and arguments that run `cmd args` in a new mount namespace (mounts otherwise as the
 * machine's, shared ones still shared) with the kubelet's tunables masked by files under `dir`.
 */
export function withMaskedTunables(dir: string, cmd: string, args: string[]): { cmd: string; args: string[] } {
  mkdirSync(dir, { recursive: true });
  const lines = ["set -e", "mount --make-rprivate /proc"];
  for (const [key, value] of Object.entries(KUBELET_TUNABLES)) {
    const file = join(dir, key.replaceAll("/", "."));
    writeFileSync(file, `${value}\n`);
    lines.push(`mount --bind ${JSON.stringify(file)} /proc/sys/${key}`);
  }
  lines.push('exec "$@"');
  return { cmd: "unshare", args: ["--mount", "--propagation", "unchanged", "--", "sh", "-c", lines.join("\n"), "sh", cmd, ...args] };
}
