// containerd for the real node, inside the node's network namespace, with everything of its own
// in the run's directory: root, state, gRPC socket, CNI config. The CRI plugin runs pods with runc
// and cgroupfs (the machine has cgroup v1 only), the project's pause image as the sandbox image
// (imported, never pulled), and the CNI bridge + host-local on the node's private pod range.
// Config version 2 is read by containerd 1.6 and migrated by containerd 2.x.
//
//   HEALTHPROBE_NODE_RUNC  the runc binary the shim runs (default: runc on the PATH)
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { waitFor } from "../../../test/support/wait-for.js";
import { startComponent, type Component } from "../processes.js";
import type { RunSlot } from "../runs.js";
import { inNamespace, type NodeNamespace } from "./namespace.js";

const run = promisify(execFile);

export const PAUSE_IMAGE = "localhost/healthprobe-test/pause:1";
export const CNI_BIN_DIR = "/usr/lib/cni";

export interface Containerd {
  readonly component: Component;
  /** containerd's gRPC socket (kubelet: unix://<socket>). */
  readonly socket: string;
  /** Runs ctr against this containerd in the k8s.io namespace. */
  ctr(args: string[]): Promise<string>;
}

function cniConfig(podCidr: string, leases: string): object {
  return {
    cniVersion: "1.0.0",
    name: "hpcp-pods",
    plugins: [
      {
        type: "bridge",
        bridge: "hpcni0",
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: { type: "host-local", ranges: [[{ subnet: podCidr }]], routes: [{ dst: "0.0.0.0/0" }], dataDir: leases },
      },
      { type: "portmap", capabilities: { portMappings: true } },
    ],
  };
}

/** Whether this process may lower an oom_score_adj (CAP_SYS_RESOURCE, bit 24 of CapEff). */
function canLowerOomScore(): boolean {
  const capEff = /^CapEff:\s*([0-9a-f]+)/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
  return capEff !== undefined && (BigInt(`0x${capEff}`) & (1n << 24n)) !== 0n;
}

function configToml(dir: string, cniConfDir: string, runc: string): string {
  const q = JSON.stringify;
  return `version = 2
root = ${q(join(dir, "root"))}
state = ${q(join(dir, "state"))}
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = ${q(join(dir, "containerd.sock"))}

[ttrpc]
  address = ${q(join(dir, "containerd.sock.ttrpc"))}

[debug]
  level = "info"

# containerd 2.x would listen for NRI plugins on the machine's /var/run/nri/nri.sock.
[plugins."io.containerd.nri.v1.nri"]
  disable = true

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(join(dir, "opt"))}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(PAUSE_IMAGE)}
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_cdi = false
  # Root without CAP_SYS_RESOURCE (some VMs and containers) cannot lower an oom_score_adj: the
  # sandbox's -998 makes runc's nsexec fail ("can't get final child's PID from pipe: EOF").
  # There, and only there, pods get at least containerd's own score instead.
  restrict_oom_score_adj = ${!canLowerOomScore()}

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = false
  BinaryName = ${q(runc)}
  # runc's state in the run's directory, not the machine's /run/containerd/runc.
  Root = ${q(join(dir, "runc"))}

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = ${q(CNI_BIN_DIR)}
  conf_dir = ${q(cniConfDir)}
`;
}

/** Writes the config, starts containerd (`bin`: its binary) in the namespace and waits for its socket. */
export async function startContainerd(
  slot: RunSlot,
  ns: NodeNamespace,
  bin = "/usr/bin/containerd",
): Promise<Containerd> {
  const dir = join(slot.dir, "containerd");
  const cniConfDir = join(dir, "cni");
  mkdirSync(cniConfDir, { recursive: true });
  writeFileSync(
    join(cniConfDir, "10-hpcp.conflist"),
    JSON.stringify(cniConfig(ns.podCidr, join(dir, "cni-leases")), null, 2),
  );
  writeFileSync(join(dir, "config.toml"), configToml(dir, cniConfDir, process.env.HEALTHPROBE_NODE_RUNC ?? "runc"));
  const socket = join(dir, "containerd.sock");
  // A containerd of our own build finds its own shim (containerd-shim-runc-v2) beside it first.
  const path = `${dirname(bin)}:${process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin"}`;
  const component = startComponent(
    slot,
    "containerd",
    "nsenter",
    inNamespace(ns.path, "env", [`PATH=${path}`, bin, "--config", join(dir, "config.toml")]),
  );
  const ctr = async (args: string[]): Promise<string> => {
    try {
      return (await run("ctr", ["--address", socket, "--namespace", "k8s.io", ...args])).stdout;
    } catch (err) {
      throw new Error(
        `ctr ${args.join(" ")} failed: ${String((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`,
        { cause: err },
      );
    }
  };
  await waitFor(
    async () => {
      if (component.exited()) throw new Error(`containerd exited:\n${component.tail()}`);
      return (
        existsSync(socket) &&
        (await ctr(["version"]).then(
          () => true,
          () => false,
        ))
      );
    },
    { timeoutMs: 30_000, intervalMs: 200, what: `containerd to serve on ${socket} (log: ${component.logFile})` },
  );
  return { component, socket, ctr };
}
