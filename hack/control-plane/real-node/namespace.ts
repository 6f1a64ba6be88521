// The real node's network namespace: every process of a real-node run (etcd, kube-apiserver,
// kube-controller-manager, containerd, kubelet, kube-proxy) runs inside it, so nothing changes in
// the machine's own namespace. The node's address sits on a dummy interface there (the API server
// advertises it; the default route points at it so the kubelet and kube-proxy find an address),
// and the CNI bridge there holds the pods. The namespace is named after the run's slot (hpcp-<n>),
// so runs.ts's leftover clean-up finds it.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { namespaceName, removeNamespace } from "../network.js";

const run = promisify(execFile);

export interface NodeNamespace {
  /** hpcp-<slot> */
  readonly name: string;
  /** /run/netns/hpcp-<slot>, for nsenter --net. */
  readonly path: string;
  /** The node's InternalIP, e.g. 10.243.7.2. */
  readonly nodeIp: string;
  /** The pods' range on the CNI bridge, e.g. 10.244.7.0/24. */
  readonly podCidr: string;
  /** Runs a command inside the namespace and returns its stdout. */
  exec(cmd: string, args: string[]): Promise<string>;
  destroy(): Promise<void>;
}

async function sh(cmd: string, args: string[]): Promise<string> {
  try {
    return (await run(cmd, args, { maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? "").trim();
    throw new Error(`${cmd} ${args.join(" ")} failed: ${stderr || (err as Error).message}`, { cause: err });
  }
}

/** nsenter's arguments that run `cmd` in the namespace at `path` (its mount namespace stays the host's). */
export const inNamespace = (path: string, cmd: string, args: string[]): string[] => [
  `--net=${path}`,
  "--",
  cmd,
  ...args,
];

export async function createNodeNamespace(slot: number): Promise<NodeNamespace> {
  if (!Number.isInteger(slot) || slot < 0 || slot > 249)
    throw new Error(`node namespace slot ${slot} is not an integer from 0 to 249`);
  if (process.getuid?.() !== 0) throw new Error("the real node needs root (ip netns, containerd, kubelet)");
  const name = namespaceName(slot);
  const path = `/run/netns/${name}`;
  const nodeIp = `10.243.${slot}.2`;
  const exec = (cmd: string, args: string[]): Promise<string> => sh("nsenter", inNamespace(path, cmd, args));
  await removeNamespace(name);
  await sh("ip", ["netns", "add", name]);
  try {
    await sh("ip", ["-n", name, "link", "set", "lo", "up"]);
    // No dummy driver on every kernel: a veth pair with both ends inside the namespace does the same.
    await sh("ip", ["-n", name, "link", "add", "hpnode0", "type", "veth", "peer", "name", "hpnode1"]);
    await sh("ip", ["-n", name, "link", "set", "hpnode1", "up"]);
    await sh("ip", ["-n", name, "addr", "add", `${nodeIp}/24`, "dev", "hpnode0"]);
    await sh("ip", ["-n", name, "link", "set", "hpnode0", "up"]);
    await sh("ip", ["-n", name, "route", "add", "default", "dev", "hpnode0"]);
    // Per-namespace settings: pods' traffic is routed through the bridge, and kube-proxy's DNAT to
    // the API server on the node's address needs local routing of service traffic.
    await exec("sysctl", ["-q", "-w", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.route_localnet=1"]);
  } catch (err) {
    await removeNamespace(name).catch(() => undefined);
    throw err;
  }
  return { name, path, nodeIp, podCidr: `10.244.${slot}.0/24`, exec, destroy: () => removeNamespace(name) };
}
