// The pods' network: a network namespace of the test bed's own, joined to the host by a veth pair.
// The host side holds 10.244.<slot>.1/24, the namespace side 10.244.<slot>.2/24 (the node's
// address), and each pod gets a /32 from 10.244.<slot>.128/25 on the namespace side. The real API
// server refuses loopback EndpointSlice addresses, so pods cannot live on 127.x as on the test server.
// With `routed`, pods instead get addresses from 10.<128+slot>.0.0/16 (slots 0–63): the host routes
// that range to the namespace, where a `local` route makes every address of it the namespace's own,
// so one server listening on all addresses answers for every pod without an address per pod.
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
  /** Where pod addresses come from, e.g. 10.244.7.128/25 (routed: 10.135.0.0/16). */
  readonly podCidr: string;
  /** Whether the pod range is routed: every address of it answers without addPodAddress. */
  readonly routed: boolean;
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

/** Slots whose network can have a routed pod range (10.<128+slot>.0.0/16): 0 to ROUTED_SLOTS - 1. */
export const ROUTED_SLOTS = 64;

/** Creates the namespace and veth pair for a slot (0–249) this process owns. */
export async function createPodNetwork(slot: number, opts: { routed?: boolean } = {}): Promise<PodNetwork> {
  if (!Number.isInteger(slot) || slot < 0 || slot > 249)
    throw new Error(`network slot ${slot} is not an integer from 0 to 249`);
  if (opts.routed && slot >= ROUTED_SLOTS)
    throw new Error(`network slot ${slot}: a routed pod range needs a slot below ${ROUTED_SLOTS}`);
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
    // The host end's route goes with the veth when the namespace is deleted.
    if (opts.routed) await routeRange(ns, hostIf, routedRange(slot), `${net}.2`);
  } catch (err) {
    await removeNamespace(ns);
    throw err;
  }
  return {
    namespace: ns,
    hostIp: `${net}.1`,
    nodeIp: `${net}.2`,
    podCidr: opts.routed ? routedRange(slot) : `${net}.128/25`,
    routed: opts.routed === true,
    addPodAddress: async (addr) => {
      await ip(["-n", ns, "addr", "replace", `${addr}/32`, "dev", podIf]);
    },
    removePodAddress: async (addr) => {
      await ip(["-n", ns, "addr", "del", `${addr}/32`, "dev", podIf]).catch(() => undefined);
    },
    destroy: () => removeNamespace(ns),
  };
}

const routedRange = (slot: number): string => `10.${128 + slot}.0.0/16`;

/** Routes a range from the host to the namespace and makes every address of it local there. */
async function routeRange(ns: string, hostIf: string, cidr: string, via: string): Promise<void> {
  await ip(["route", "add", cidr, "via", via, "dev", hostIf]);
  await ip(["-n", ns, "route", "add", "local", cidr, "dev", "lo"]);
}

/** Deletes a namespace of ours; its veth end goes with it, and the host end with its peer. */
export async function removeNamespace(ns: string): Promise<void> {
  if (!ns.startsWith(NAME_PREFIX))
    throw new Error(`refusing to remove network namespace ${ns}: not one of the control plane's (${NAME_PREFIX}*)`);
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
