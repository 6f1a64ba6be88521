// The pods' network: a network namespace of the test bed's own, joined to the host by a veth pair.
// The host side holds 10.244.<slot>.1/24, the namespace side 10.244.<slot>.2/24 (the node's
// address), and each pod gets a /32 from 10.244.<slot>.128/25 on the namespace side. The real API
// server refuses loopback EndpointSlice addresses, so pods cannot live on 127.x as on the test server.
// Every name starts with NAME_PREFIX, so a later run can find and remove what a crashed one left.
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export const NAME_PREFIX = "hpcp-";

export interface PodNetwork {
  /** The network namespace, e.g. hpcp-7. */
  readonly namespace: string;
  /** The host's address on the veth, e.g. 10.244.7.1. */
  readonly hostIp: string;
  /** The node's address (inside the namespace), e.g. 10.244.7.2. */
  readonly nodeIp: string;
  /** Where pod addresses come from, e.g. 10.244.7.128/25. */
  readonly podCidr: string;
  addPodAddress(ip: string): Promise<void>;
  removePodAddress(ip: string): Promise<void>;
  destroy(): Promise<void>;
}

async function ip(args: string[]): Promise<string> {
  try {
    return (await run("ip", args)).stdout;
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? "").trim();
    throw new Error(`ip ${args.join(" ")} failed: ${stderr || (err as Error).message}`, { cause: err });
  }
}

export const namespaceName = (slot: number): string => `${NAME_PREFIX}${slot}`;

/** Creates the namespace and veth pair for a slot (0–249) this process owns. */
export async function createPodNetwork(slot: number): Promise<PodNetwork> {
  if (!Number.isInteger(slot) || slot < 0 || slot > 249) throw new Error(`network slot ${slot} is not an integer from 0 to 249`);
  if (process.getuid?.() !== 0) throw new Error("the control plane's pod network needs root (ip netns, veth)");
  const ns = namespaceName(slot);
  const hostIf = `hpcp${slot}h`;
  const podIf = `hpcp${slot}p`;
  const net = `10.244.${slot}`;
  // A leftover of this slot (its owner is gone, or the caller would not own the slot) goes first.
  await removeNamespace(ns);
  await ip(["link", "del", hostIf]).catch(() => undefined);
  await ip(["netns", "add", ns]);
  try {
    await ip(["link", "add", hostIf, "type", "veth", "peer", "name", podIf, "netns", ns]);
    await ip(["addr", "add", `${net}.1/24`, "dev", hostIf]);
    await ip(["link", "set", hostIf, "up"]);
    await ip(["-n", ns, "addr", "add", `${net}.2/24`, "dev", podIf]);
    await ip(["-n", ns, "link", "set", podIf, "up"]);
    await ip(["-n", ns, "link", "set", "lo", "up"]);
  } catch (err) {
    await removeNamespace(ns);
    throw err;
  }
  return {
    namespace: ns,
    hostIp: `${net}.1`,
    nodeIp: `${net}.2`,
    podCidr: `${net}.128/25`,
    addPodAddress: async (addr) => {
      await ip(["-n", ns, "addr", "replace", `${addr}/32`, "dev", podIf]);
    },
    removePodAddress: async (addr) => {
      await ip(["-n", ns, "addr", "del", `${addr}/32`, "dev", podIf]).catch(() => undefined);
    },
    destroy: () => removeNamespace(ns),
  };
}

/** Deletes a namespace of ours; its veth end goes with it, and the host end with its peer. */
export async function removeNamespace(ns: string): Promise<void> {
  if (!ns.startsWith(NAME_PREFIX)) throw new Error(`refusing to remove network namespace ${ns}: not one of the control plane's (${NAME_PREFIX}*)`);
  const names = await listNamespaces();
  if (names.includes(ns)) await ip(["netns", "del", ns]);
}

/** The control plane's network namespaces that exist now. */
export async function listNamespaces(): Promise<string[]> {
  const out = await ip(["netns", "list"]).catch(() => "");
  return out
    .split("\n")
    .map((line) => line.trim().split(/\s+/)[0] ?? "")
    .filter((name) => name.startsWith(NAME_PREFIX));
}
