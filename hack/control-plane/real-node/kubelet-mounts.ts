// The real node's kubelet runs in a mount namespace of its own, so that what it would write to
// the machine outside the run's directory lands nowhere:
// - six machine-wide kernel tunables it sets when it starts (vm.overcommit_memory=1,
//   kernel.panic=10, kernel.panic_on_oops=1, ...) unless they hold its values already
//   (protectKernelDefaults only turns that into a refusal to start): there, those /proc/sys files
//   are bind mounts of files holding its values, so it reads what it wants and writes nothing;
// - its fixed paths /var/lib/kubelet/device-plugins (a socket) and /var/log/containers: there,
//   /var/lib and /var/log are empty tmpfs mounts.
// Its root directory is a shared mount first, so the volumes it mounts there still reach
// containerd and runc, which run in the machine's mount namespace.
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
const HIDDEN_DIRS = ["/var/lib", "/var/log"];

/** Bind-mounts `dir` on itself as a shared mount (the run's clean-up unmounts everything under it). */
export function makeSharedMount(dir: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["--bind", dir, dir]);
  execFileSync("mount", ["--make-shared", dir]);
}

/**
 * The command and arguments that run `cmd args` in a new mount namespace as described above;
 * the tunables' files are written under `dir`.
 */
export function inKubeletMountNamespace(dir: string, cmd: string, args: string[]): { cmd: string; args: string[] } {
  mkdirSync(dir, { recursive: true });
  // The new namespace keeps shared mounts shared: each mount made in it goes on a parent made
  // private first, so that none of them propagates back to the machine.
  const lines = ["set -e", "mount --make-rprivate /proc"];
  for (const [key, value] of Object.entries(KUBELET_TUNABLES)) {
    const file = join(dir, key.replaceAll("/", "."));
    writeFileSync(file, `${value}\n`);
    lines.push(`mount --bind ${JSON.stringify(file)} /proc/sys/${key}`);
  }
  for (const d of HIDDEN_DIRS)
    lines.push(
      `mount --make-private "$(findmnt -n -o TARGET -T ${d})"`,
      `mount -t tmpfs -o mode=0755,size=16m tmpfs ${d}`,
    );
  lines.push('exec "$@"');
  return {
    cmd: "unshare",
    args: ["--mount", "--propagation", "unchanged", "--", "sh", "-c", lines.join("\n"), "sh", cmd, ...args],
  };
}
