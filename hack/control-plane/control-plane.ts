// A real Kubernetes control plane for tests: etcd, kube-apiserver (token users, RBAC, its own
// serving certificate, service-account keys made here) and kube-controller-manager (every
// controller but node lifecycle), one Node, and a kubelet stand-in whose pods live on a network
// namespace of this run's own (optionally on a routed range there, served by the caller, and with
// an audit log). Everything it creates is removed by stop(), and by the next start
// if this process dies first.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { waitFor } from "../../test/support/wait-for.js";
import { Kubelet } from "./kubelet.js";
import { createPodNetwork, ROUTED_SLOTS, type PodNetwork } from "./network.js";
import { PodServers } from "./pod-servers.js";
import { controlPlaneBinaries, freePort, startComponent, type Component } from "./processes.js";
import { claimSlot, cleanLeftovers, type RunSlot } from "./runs.js";
import { AUDIT_LOG, auditFlags } from "./audit.js";

/** Users in system:masters; any other user must be passed in `users`. */
export const ADMIN_USERS = ["admin", "controller-manager", "kubelet", "kubectl-user", "client-node-user", "informer"];
export const SERVICE_CIDR = "10.96.0.0/16";
export const NODE_NAME = "node-1";
export const NODE_ZONE = "zone-a";

export interface ControlPlaneOptions {
  /** Extra token users and their groups (none: only system:authenticated, so RBAC decides everything). */
  users?: Record<string, string[]>;
  /** Called with the kubelet stand-in's errors (they are retried); default: ignored. */
  onError?: (err: Error) => void;
  /**
   * Pods on a routed /16 (network.ts) and no per-pod servers: the caller serves every pod address
   * with one server in the network namespace (for thousands of pods).
   */
  routedPods?: boolean;
  /** An audit policy for kube-apiserver (audit.k8s.io/v1 Policy); the log goes to `auditLog`, one JSON event a line. */
  auditPolicy?: object;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  readonly network: PodNetwork;
  readonly podServers: PodServers;
  readonly nodeName: string;
  /** Milliseconds from the call to a ready cluster. */
  readonly startMs: number;
  /** The run's directory: component logs and etcd's data. */
  readonly dir: string;
  /** kube-apiserver's audit log when an audit policy was given. */
  readonly auditLog?: string;
  /** Kubeconfig YAML for a token user (ADMIN_USERS or one passed in `users`). */
  kubeconfig(user?: string): string;
  /** Kubeconfig YAML for a bearer token from elsewhere, e.g. a ServiceAccount's TokenRequest. */
  tokenKubeconfig(name: string, token: string): string;
  writeKubeconfig(path: string, user?: string): void;
  /**
   * Stops etcd or kube-apiserver with the signal (SIGKILL: a crash; SIGTERM: a graceful stop), keeps
   * it down for `downMs`, starts it again with the same flags, port and data directory, and resolves
   * once kube-apiserver serves again.
   */
  restart(component: "etcd" | "kube-apiserver", opts?: { signal?: NodeJS.Signals; downMs?: number }): Promise<void>;
  /** Records a process the caller started for this run (its command line must name `dir`), so the next start stops it if this run crashes. */
  recordPid(pid: number): void;
  stop(): Promise<void>;
}

function kubeconfigYaml(url: string, name: string, token: string): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "control-plane", cluster: { server: url, "insecure-skip-tls-verify": true } }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: "control-plane", user: name, namespace: "default" } }],
    "current-context": name,
  });
}

async function writeNode(core: CoreV1Api, network: PodNetwork): Promise<void> {
  const labels = {
    "kubernetes.io/hostname": NODE_NAME,
    "kubernetes.io/os": "linux",
    "topology.kubernetes.io/zone": NODE_ZONE,
  };
  const node = await core.createNode({
    body: {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: NODE_NAME, labels },
      spec: { podCIDR: network.podCidr, podCIDRs: [network.podCidr] },
    },
  });
  const now = new Date();
  node.status = {
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "KubeletReady",
        message: "kubelet stand-in is posting ready status",
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
    addresses: [
      { type: "InternalIP", address: network.nodeIp },
      { type: "Hostname", address: NODE_NAME },
    ],
    nodeInfo: {
      architecture: "amd64",
      operatingSystem: "linux",
      bootID: "",
      containerRuntimeVersion: "",
      kernelVersion: "",
      kubeProxyVersion: "",
      kubeletVersion: "v1.37.2",
      machineID: "",
      osImage: "",
      systemUUID: "",
    },
  };
  await core.replaceNodeStatus({ name: NODE_NAME, body: node });
}

async function restartComponent(
  parts: Parts,
  slot: RunSlot,
  core: CoreV1Api,
  name: string,
  opts: { signal?: NodeJS.Signals; downMs?: number },
): Promise<void> {
  const i = parts.components.findIndex((c) => c.name === name);
  const old = parts.components[i];
  if (!old)
    throw new Error(
      `restart: no control plane component ${JSON.stringify(name)} (known: ${parts.components.map((c) => c.name).join(", ")})`,
    );
  await old.kill(opts.signal ?? "SIGKILL");
  if (opts.downMs) await new Promise((r) => setTimeout(r, opts.downMs));
  parts.components[i] = startComponent(slot, old.name, old.bin, old.args);
  await waitFor(
    () =>
      core.readNamespace({ name: "default" }).then(
        () => true,
        () => false,
      ),
    {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: `kube-apiserver to serve after ${name} restarted (log: ${old.logFile})`,
    },
  );
}

interface Parts {
  slot?: RunSlot;
  network?: PodNetwork;
  podServers?: PodServers;
  components: Component[];
  kubelet?: Kubelet;
}

async function stopParts(parts: Parts): Promise<void> {
  await parts.kubelet?.stop().catch(() => undefined);
  for (const c of [...parts.components].reverse()) await c.stop();
  await parts.podServers?.stop().catch(() => undefined);
  await parts.network?.destroy().catch(() => undefined);
  parts.slot?.release();
}

type Users = Map<string, { token: string; groups: string[] }>;

/** Token users (admins and `extra`) in a token file, and the service-account signing keys, in the run's directory. */
function writeCredentials(dir: string, extra: Record<string, string[]>): { users: Users; tokenFile: string } {
  const users: Users = new Map();
  for (const u of ADMIN_USERS) users.set(u, { token: randomBytes(16).toString("hex"), groups: ["system:masters"] });
  for (const [u, groups] of Object.entries(extra)) users.set(u, { token: randomBytes(16).toString("hex"), groups });
  const tokenFile = join(dir, "tokens.csv");
  writeFileSync(
    tokenFile,
    [...users].map(([u, { token, groups }], i) => `${token},${u},uid-${i},"${groups.join(",")}"`).join("\n") + "\n",
  );
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  writeFileSync(join(dir, "sa.key"), privateKey, { mode: 0o600 });
  writeFileSync(join(dir, "sa.pub"), publicKey);
  return { users, tokenFile };
}

async function startEtcd(slot: RunSlot, bin: string): Promise<{ etcd: Component; etcdUrl: string }> {
  const [etcdClient, etcdPeer] = [await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${etcdClient}`;
  const etcd = startComponent(slot, "etcd", join(bin, "etcd"), [
    "--name=default",
    `--data-dir=${join(slot.dir, "etcd")}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
    "--unsafe-no-fsync",
    "--log-level=warn",
  ]);
  return { etcd, etcdUrl };
}

function apiServerArgs(o: {
  dir: string;
  etcdUrl: string;
  certDir: string;
  apiPort: number;
  network: PodNetwork;
  tokenFile: string;
  auditPolicy?: object;
}): string[] {
  return [
    `--etcd-servers=${o.etcdUrl}`,
    `--cert-dir=${o.certDir}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${o.apiPort}`,
    // Not loopback: the kubernetes Service's endpoints get this address. It is the host's end of the veth.
    `--advertise-address=${o.network.hostIp}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${join(o.dir, "sa.pub")}`,
    `--service-account-signing-key-file=${join(o.dir, "sa.key")}`,
    "--authorization-mode=RBAC",
    `--token-auth-file=${o.tokenFile}`,
    "--allow-privileged=true",
    ...auditFlags(o.dir, o.auditPolicy),
  ];
}

function startControllerManager(slot: RunSlot, bin: string, kubeconfig: string, certDir: string): Component {
  const kcmConfig = join(slot.dir, "controller-manager.kubeconfig");
  writeFileSync(kcmConfig, kubeconfig);
  return startComponent(slot, "kube-controller-manager", join(bin, "kube-controller-manager"), [
    `--kubeconfig=${kcmConfig}`,
    "--leader-elect=false",
    // No kubelets post Node leases here: node lifecycle would taint and evict everything.
    "--controllers=*,-node-lifecycle-controller",
    "--use-service-account-credentials=false",
    `--service-account-private-key-file=${join(slot.dir, "sa.key")}`,
    `--root-ca-file=${join(certDir, "apiserver.crt")}`,
    "--secure-port=0",
  ]);
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const started = Date.now();
  const bin = controlPlaneBinaries();
  await cleanLeftovers();
  const parts: Parts = { components: [] };
  try {
    const slot = (parts.slot = claimSlot(opts.routedPods ? ROUTED_SLOTS : undefined));
    const network = (parts.network = await createPodNetwork(slot.slot, { routed: opts.routedPods }));
    parts.podServers = await PodServers.start(network.namespace, slot.dir);

    const { users, tokenFile } = writeCredentials(slot.dir, opts.users ?? {});

    const { etcd, etcdUrl } = await startEtcd(slot, bin);
    parts.components.push(etcd);
    const apiPort = await freePort();

    const certDir = join(slot.dir, "certs");
    const apiserver = startComponent(
      slot,
      "kube-apiserver",
      join(bin, "kube-apiserver"),
      apiServerArgs({ dir: slot.dir, etcdUrl, certDir, apiPort, network, tokenFile, auditPolicy: opts.auditPolicy }),
    );
    parts.components.push(apiserver);

    const url = `https://127.0.0.1:${apiPort}`;
    const kubeconfig = (user = "admin"): string => {
      const u = users.get(user);
      if (!u)
        throw new Error(
          `control plane user ${JSON.stringify(user)} is unknown: pass it in the users option (known: ${[...users.keys()].join(", ")})`,
        );
      return kubeconfigYaml(url, user, u.token);
    };
    const adminKc = new KubeConfig();
    adminKc.loadFromString(kubeconfig("admin"));
    const core = adminKc.makeApiClient(CoreV1Api);
    const outcome = await waitFor<{ exited?: Component }>(
      async () => {
        const gone = [etcd, apiserver].find((c) => c.exited());
        if (gone) return { exited: gone };
        return core.readNamespace({ name: "default" }).then(
          () => ({}),
          () => false,
        );
      },
      { timeoutMs: 120_000, intervalMs: 200, what: "kube-apiserver to serve" },
    );
    if (outcome.exited) throw new Error(`${outcome.exited.name} exited`);

    parts.components.push(startControllerManager(slot, bin, kubeconfig("controller-manager"), certDir));
    await writeNode(core, network);

    const kubeletKc = new KubeConfig();
    kubeletKc.loadFromString(kubeconfig("kubelet"));
    parts.kubelet = new Kubelet({
      kc: kubeletKc,
      nodeName: NODE_NAME,
      network,
      servers: opts.routedPods ? undefined : parts.podServers,
      onError: opts.onError ?? (() => undefined),
    });
    await parts.kubelet.start();
    // The service-account controller runs once the default namespace has its ServiceAccount.
    await waitFor(
      () =>
        core.readNamespacedServiceAccount({ name: "default", namespace: "default" }).then(
          () => true,
          () => false,
        ),
      {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: `kube-controller-manager to create the default ServiceAccount (log: ${join(slot.dir, "kube-controller-manager.log")})`,
      },
    );

    const podServers = parts.podServers;
    return {
      url,
      network,
      podServers,
      nodeName: NODE_NAME,
      startMs: Date.now() - started,
      dir: slot.dir,
      ...(opts.auditPolicy ? { auditLog: join(slot.dir, AUDIT_LOG) } : {}),
      kubeconfig,
      tokenKubeconfig: (name, token) => kubeconfigYaml(url, name, token),
      writeKubeconfig: (path, user) => writeFileSync(path, kubeconfig(user), { mode: 0o600 }),
      restart: (name, o = {}) => restartComponent(parts, slot, core, name, o),
      recordPid: (pid) => slot.recordPid(pid),
      stop: () => stopParts(parts),
    };
  } catch (err) {
    const logs = parts.components.map((c) => `--- ${c.name} (${c.logFile}) ---\n${c.tail()}`).join("\n");
    await stopParts(parts);
    throw new Error(`starting the control plane failed\n${logs}`, { cause: err });
  }
}
