// A real-node cluster: the control plane, containerd, a real kubelet and kube-proxy, all in one
// network namespace of the run's own (namespace.ts). Host processes reach the API server on a
// loopback port bridged over a unix socket (bridge.ts). stop() removes pods, processes, mounts,
// cgroups, pod namespaces, the node's namespace and the run's directory; a crashed run's leftovers
// go at the next start.
//
//   HEALTHPROBE_NODE_BIN  a directory with kubelet, kube-proxy and kube-scheduler (and optionally containerd 2.x);
//                         default: what hack/control-plane/build-node.sh builds
import { spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { waitFor } from "../../../test/support/wait-for.js";
import { controlPlaneBinaries, startComponent, type Component } from "../processes.js";
import { claimSlot, cleanLeftovers, type RunSlot } from "../runs.js";
import { startHostBridge, type HostBridge } from "./bridge.js";
import { cleanRealNodeLeftovers, cleanRun, MARKER, podNamespaces } from "./cleanup.js";
import * as c from "./components.js";
import { startContainerd, type Containerd } from "./containerd.js";
import { createNodeNamespace, type NodeNamespace } from "./namespace.js";
import { AUDIT_LOG } from "../audit.js";

const here = dirname(fileURLToPath(import.meta.url));
// "operator": the healthprobe operator run as a process, so the audit log tells its requests apart.
const USERS = ["admin", "controller-manager", "scheduler", "kubelet", "kube-proxy", "operator"];

export interface RealNodeOptions {
  /** An audit policy for kube-apiserver (audit.k8s.io/v1 Policy); the log goes to `auditLog`. */
  auditPolicy?: object;
}

export interface RealNodeCluster {
  /** https://127.0.0.1:<port> on the host's loopback. */
  readonly url: string;
  readonly namespace: NodeNamespace;
  readonly nodeName: string;
  readonly dir: string;
  /** Milliseconds from the call to a Ready node. */
  readonly startMs: number;
  readonly containerd: Containerd;
  kubeconfig(user?: string): string;
  writeKubeconfig(path: string): void;
  /** kube-apiserver's audit log when an audit policy was given. */
  readonly auditLog?: string;
  /**
   * Stops the kubelet with the signal (SIGTERM: its own shutdown; the pods' containers keep
   * running under containerd), keeps it down for `downMs` and starts it again with the same
   * command line, mount namespace set-up and root directory. Resolves once it is started, not Ready.
   */
  restartKubelet(opts?: { signal?: NodeJS.Signals; downMs?: number }): Promise<void>;
  /** Imports an OCI image archive into containerd's k8s.io namespace, where the kubelet finds it. */
  importArchive(path: string): void;
  stop(): Promise<void>;
}

export function nodeBinaries(): string {
  const fromEnv = process.env.HEALTHPROBE_NODE_BIN;
  if (fromEnv) return fromEnv;
  const out = spawnSync("bash", [join(here, "..", "build-node.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (out.status !== 0)
    throw new Error(`hack/control-plane/build-node.sh failed with exit status ${out.status ?? out.signal}`);
  return out.stdout.trim().split("\n").pop()!;
}

function writeCredentials(dir: string): { tokens: Map<string, string>; tokenFile: string } {
  const tokens = new Map(USERS.map((u) => [u, randomBytes(16).toString("hex")]));
  const tokenFile = join(dir, "tokens.csv");
  writeFileSync(tokenFile, [...tokens].map(([u, t], i) => `${t},${u},uid-${i},"system:masters"`).join("\n") + "\n", {
    mode: 0o600,
  });
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  writeFileSync(join(dir, "sa.key"), privateKey, { mode: 0o600 });
  writeFileSync(join(dir, "sa.pub"), publicKey);
  return { tokens, tokenFile };
}

interface Parts {
  slot?: RunSlot;
  stopping?: boolean;
  ns?: NodeNamespace;
  bridge?: HostBridge;
  components: Component[];
  core?: CoreV1Api;
}

/** Deletes every pod so the kubelet stops their sandboxes (CNI teardown) while it still runs. */
async function drainPods(core: CoreV1Api, containerd: Component | undefined): Promise<void> {
  const pods = await core.listPodForAllNamespaces().catch(() => ({ items: [] }));
  for (const p of pods.items) {
    await core
      .deleteNamespacedPod({ name: p.metadata!.name!, namespace: p.metadata!.namespace!, gracePeriodSeconds: 0 })
      .catch(() => undefined);
  }
  if (!containerd || pods.items.length === 0) return;
  await waitFor(
    () =>
      core.listPodForAllNamespaces().then(
        (l) => l.items.length === 0,
        () => true,
      ),
    { timeoutMs: 30_000, intervalMs: 250, what: "pods to be deleted" },
  ).catch(() => undefined);
}

async function stopParts(parts: Parts): Promise<void> {
  parts.stopping = true;
  const byName = (n: string): Component | undefined => parts.components.find((x) => x.name === n);
  // A kubelet stopped by restartKubelet cannot tear sandboxes down: cleanRun removes them instead.
  const kubelet = byName("kubelet");
  // Taken first: a pod whose veth CNI has already removed can no longer be told to be the run's,
  // and a containerd stopped before it deleted that namespace leaves it behind for cleanRun.
  const podNetns = parts.ns ? await podNamespaces(parts.ns.name).catch(() => []) : [];
  if (parts.core && kubelet && !kubelet.exited())
    await drainPods(parts.core, byName("containerd")).catch(() => undefined);
  for (const x of [...parts.components].reverse()) await x.stop().catch(() => undefined);
  await parts.bridge?.close().catch(() => undefined);
  if (parts.slot && parts.ns) await cleanRun(parts.slot.dir, parts.ns.name, podNetns).catch(() => undefined);
  await parts.ns?.destroy().catch(() => undefined);
  parts.slot?.release();
}

/** The new kubelet takes the old one's place in `parts`, so stop() and the crash clean-up find it. */
async function restartKubelet(parts: Parts, opts: { signal?: NodeJS.Signals; downMs?: number }): Promise<void> {
  const i = parts.components.findIndex((x) => x.name === "kubelet");
  const old = parts.components[i];
  if (!old || !parts.slot) throw new Error("restartKubelet: the node has no kubelet");
  await old.kill(opts.signal ?? "SIGTERM");
  if (opts.downMs) await new Promise((r) => setTimeout(r, opts.downMs));
  if (parts.stopping) throw new Error("restartKubelet: the node is stopping");
  parts.components[i] = startComponent(parts.slot, old.name, old.bin, old.args);
}

function importArchive(socket: string, path: string): void {
  const out = spawnSync("ctr", ["-a", socket, "-n", "k8s.io", "images", "import", path], { encoding: "utf8" });
  if (out.status !== 0) throw new Error(`ctr images import ${path} failed: ${out.stderr || out.error?.message}`);
}

function importImages(socket: string): void {
  const out = spawnSync(
    "npx",
    ["tsx", join(here, "..", "..", "images", "main.ts"), "import", "--address", socket, "pause", "workload"],
    { encoding: "utf8", cwd: join(here, "..", "..", "..") },
  );
  if (out.status !== 0) throw new Error(`importing the pause and workload images failed: ${out.stderr}`);
}

async function waitReady(parts: Parts, what: string, check: () => Promise<boolean>): Promise<void> {
  const outcome = await waitFor<{ gone?: Component }>(
    async () => {
      const gone = parts.components.find((x) => x.exited());
      if (gone) return { gone };
      return (await check()) ? {} : false;
    },
    { timeoutMs: 180_000, intervalMs: 250, what },
  );
  if (outcome.gone) throw new Error(`${outcome.gone.name} exited while waiting for ${what}:\n${outcome.gone.tail()}`);
}

export async function startRealNode(opts: RealNodeOptions = {}): Promise<RealNodeCluster> {
  const started = Date.now();
  const cpBin = controlPlaneBinaries();
  const nodeBin = nodeBinaries();
  await cleanRealNodeLeftovers();
  await cleanLeftovers();
  const parts: Parts = { components: [] };
  try {
    const slot = (parts.slot = claimSlot());
    writeFileSync(join(slot.dir, MARKER), "");
    const ns = (parts.ns = await createNodeNamespace(slot.slot));
    const { tokens, tokenFile } = writeCredentials(slot.dir);
    const inside = (user: string): string =>
      c.kubeconfigYaml(`https://127.0.0.1:${c.API_PORT}`, user, tokens.get(user)!);
    parts.components.push(c.startEtcd(slot, ns, cpBin), c.startApiServer(slot, ns, cpBin, tokenFile, opts.auditPolicy));
    const socket = join(slot.dir, "api.sock");
    parts.components.push(c.startApiForwarder(slot, ns, socket));
    parts.bridge = await startHostBridge(socket);
    const url = `https://127.0.0.1:${parts.bridge.port}`;
    const kubeconfig = (user = "admin"): string =>
      c.kubeconfigYaml(url, user, tokens.get(user) ?? tokens.get("admin")!);
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig());
    const core = (parts.core = kc.makeApiClient(CoreV1Api));
    await waitReady(parts, "kube-apiserver to serve through the bridge", () =>
      core.readNamespace({ name: "default" }).then(
        () => true,
        () => false,
      ),
    );
    parts.components.push(
      c.startControllerManager(slot, ns, cpBin, inside("controller-manager")),
      c.startScheduler(slot, ns, nodeBin, inside("scheduler")),
    );
    const containerdBin = existsSync(join(nodeBin, "containerd")) ? join(nodeBin, "containerd") : "/usr/bin/containerd";
    const containerd = await startContainerd(slot, ns, containerdBin);
    parts.components.push(containerd.component);
    importImages(containerd.socket);
    parts.components.push(
      c.startKubelet(slot, ns, nodeBin, inside("kubelet")),
      c.startKubeProxy(slot, ns, nodeBin, inside("kube-proxy")),
    );
    await waitReady(parts, `node ${c.NODE_NAME} to be Ready (log: ${join(slot.dir, "kubelet.log")})`, async () => {
      const node = await core.readNode({ name: c.NODE_NAME }).catch(() => undefined);
      return node?.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") ?? false;
    });
    await waitReady(parts, "the default ServiceAccount", () =>
      core.readNamespacedServiceAccount({ name: "default", namespace: "default" }).then(
        () => true,
        () => false,
      ),
    );
    let stopping: Promise<void> | undefined;
    return {
      url,
      namespace: ns,
      nodeName: c.NODE_NAME,
      dir: slot.dir,
      startMs: Date.now() - started,
      containerd,
      ...(opts.auditPolicy ? { auditLog: join(slot.dir, AUDIT_LOG) } : {}),
      restartKubelet: (o = {}) => restartKubelet(parts, o),
      kubeconfig,
      writeKubeconfig: (path) => writeFileSync(path, kubeconfig(), { mode: 0o600 }),
      importArchive: (path) => importArchive(containerd.socket, path),
      // Once: a second call waits for the first.
      stop: () => (stopping ??= stopParts(parts)),
    };
  } catch (err) {
    const logs = parts.components.map((x) => `--- ${x.name} (${x.logFile}) ---\n${x.tail()}`).join("\n");
    await stopParts(parts);
    throw new Error(`starting the real node failed\n${logs}`, { cause: err });
  }
}
