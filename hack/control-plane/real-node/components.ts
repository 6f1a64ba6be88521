// The real node's processes, each started inside the node's network namespace with nsenter (not
// `ip netns exec`, whose private mount namespace would hide the kubelet's volume mounts from
// containerd; the kubelet's own mount namespace shares its root directory, kubelet-mounts.ts):
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, the API server's forwarder to the
// host, kubelet and kube-proxy. Every command line names the run's directory, so runs.ts's crash clean-up
// recognises them.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { startComponent, type Component } from "../processes.js";
import type { RunSlot } from "../runs.js";
import { inKubeletMountNamespace, makeSharedMount } from "./kubelet-mounts.js";
import { inNamespace, type NodeNamespace } from "./namespace.js";
import { auditFlags } from "../audit.js";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, "..", "..", "..");

export const SERVICE_CIDR = "10.96.0.0/16";
export const NODE_NAME = "node-1";
const ETCD_PORT = 2379;
const ETCD_PEER_PORT = 2380;
export const API_PORT = 6443;

export const cgroupRoot = (ns: NodeNamespace): string => `/${ns.name}`;

const inNs = (slot: RunSlot, ns: NodeNamespace, name: string, bin: string, args: string[]): Component =>
  startComponent(slot, name, "nsenter", inNamespace(ns.path, bin, args));

export function kubeconfigYaml(url: string, name: string, token: string): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "real-node", cluster: { server: url, "insecure-skip-tls-verify": true } }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: "real-node", user: name, namespace: "default" } }],
    "current-context": name,
  });
}

export function startEtcd(slot: RunSlot, ns: NodeNamespace, bin: string): Component {
  const client = `http://127.0.0.1:${ETCD_PORT}`;
  const peer = `http://127.0.0.1:${ETCD_PEER_PORT}`;
  return inNs(slot, ns, "etcd", join(bin, "etcd"), [
    "--name=default",
    `--data-dir=${join(slot.dir, "etcd")}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=default=${peer}`,
    "--unsafe-no-fsync",
    "--log-level=warn",
  ]);
}

export function startApiServer(
  slot: RunSlot,
  ns: NodeNamespace,
  bin: string,
  tokenFile: string,
  auditPolicy?: object,
): Component {
  return inNs(slot, ns, "kube-apiserver", join(bin, "kube-apiserver"), [
    `--etcd-servers=http://127.0.0.1:${ETCD_PORT}`,
    `--cert-dir=${join(slot.dir, "certs")}`,
    // All addresses of the node's own namespace: pods reach it through the kubernetes Service.
    "--bind-address=0.0.0.0",
    `--secure-port=${API_PORT}`,
    `--advertise-address=${ns.nodeIp}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${join(slot.dir, "sa.pub")}`,
    `--service-account-signing-key-file=${join(slot.dir, "sa.key")}`,
    "--authorization-mode=Node,RBAC",
    `--token-auth-file=${tokenFile}`,
    "--allow-privileged=true",
    "--kubelet-preferred-address-types=InternalIP",
    ...auditFlags(slot.dir, auditPolicy),
  ]);
}

export function startControllerManager(slot: RunSlot, ns: NodeNamespace, bin: string, kubeconfig: string): Component {
  const file = join(slot.dir, "controller-manager.kubeconfig");
  writeFileSync(file, kubeconfig, { mode: 0o600 });
  return inNs(slot, ns, "kube-controller-manager", join(bin, "kube-controller-manager"), [
    `--kubeconfig=${file}`,
    "--leader-elect=false",
    "--use-service-account-credentials=false",
    `--service-account-private-key-file=${join(slot.dir, "sa.key")}`,
    `--root-ca-file=${join(slot.dir, "certs", "apiserver.crt")}`,
    "--secure-port=0",
  ]);
}

/** The scheduler: the node's Deployments (the operator's own, the workloads') have pods to place. */
export function startScheduler(slot: RunSlot, ns: NodeNamespace, bin: string, kubeconfig: string): Component {
  const file = join(slot.dir, "scheduler.kubeconfig");
  writeFileSync(file, kubeconfig, { mode: 0o600 });
  return inNs(slot, ns, "kube-scheduler", join(bin, "kube-scheduler"), [
    `--kubeconfig=${file}`,
    "--leader-elect=false",
    "--secure-port=0",
  ]);
}

/** The API server's forwarder inside the namespace: a unix socket in the run's directory to its TCP port. */
export function startApiForwarder(slot: RunSlot, ns: NodeNamespace, socket: string): Component {
  const loader = join(repoRoot, "node_modules", "tsx", "dist", "loader.mjs");
  return inNs(slot, ns, "api-forwarder", process.execPath, [
    "--import",
    `file://${loader}`,
    join(here, "bridge.ts"),
    socket,
    String(API_PORT),
  ]);
}

/**
 * The kubelet's cgroupRoot must exist in every cgroup v1 hierarchy before it starts; cpuset's child
 * starts with no CPUs or memory nodes, so it gets its parent's.
 */
export function createCgroupRoot(ns: NodeNamespace): void {
  for (const h of readdirSync("/sys/fs/cgroup")) {
    const parent = join("/sys/fs/cgroup", h);
    if (!existsSync(join(parent, "cgroup.procs")) || h === "unified") continue;
    const dir = join(parent, ns.name);
    mkdirSync(dir, { recursive: true });
    for (const f of ["cpuset.cpus", "cpuset.mems"]) {
      if (existsSync(join(parent, f)))
        writeFileSync(join(dir, f), readFileSync(join(parent, f), "utf8").trim() || "\n");
    }
  }
}

function kubeletConfig(slot: RunSlot, ns: NodeNamespace): object {
  return {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // The machine has cgroup v1 only; kubelet 1.35+ refuses it unless told otherwise.
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    cgroupRoot: cgroupRoot(ns),
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ["pods"],
    failSwapOn: false,
    // The API server reaches the kubelet inside the private namespace only: logs and exec need no client certificate.
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: "AlwaysAllow" },
    address: ns.nodeIp,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: 10248,
    // The images are imported, never pulled: image garbage collection and disk eviction must not remove them.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { "memory.available": "1Mi", "nodefs.available": "0%", "imagefs.available": "0%" },
    resolvConf: "/etc/resolv.conf",
    podLogsDir: join(slot.dir, "pod-logs"),
    podPidsLimit: -1,
    serializeImagePulls: false,
    containerRuntimeEndpoint: `unix://${join(slot.dir, "containerd", "containerd.sock")}`,
  };
}

export function startKubelet(slot: RunSlot, ns: NodeNamespace, bin: string, kubeconfig: string): Component {
  const dir = join(slot.dir, "kubelet");
  const kc = join(slot.dir, "kubelet.kubeconfig");
  const config = join(slot.dir, "kubelet-config.yaml");
  writeFileSync(kc, kubeconfig, { mode: 0o600 });
  writeFileSync(config, stringify(kubeletConfig(slot, ns)));
  createCgroupRoot(ns);
  makeSharedMount(dir);
  const kubelet = inKubeletMountNamespace(join(slot.dir, "kernel-tunables"), join(bin, "kubelet"), [
    `--kubeconfig=${kc}`,
    `--config=${config}`,
    `--root-dir=${dir}`,
    `--cert-dir=${join(dir, "pki")}`,
    `--hostname-override=${NODE_NAME}`,
    `--node-ip=${ns.nodeIp}`,
    "--v=2",
  ]);
  return inNs(slot, ns, "kubelet", kubelet.cmd, kubelet.args);
}

export function startKubeProxy(slot: RunSlot, ns: NodeNamespace, bin: string, kubeconfig: string): Component {
  const kc = join(slot.dir, "kube-proxy.kubeconfig");
  const config = join(slot.dir, "kube-proxy-config.yaml");
  writeFileSync(kc, kubeconfig, { mode: 0o600 });
  writeFileSync(
    config,
    stringify({
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      mode: "iptables",
      clientConnection: { kubeconfig: kc },
      hostnameOverride: NODE_NAME,
      clusterCIDR: ns.podCidr,
      // conntrack limits are the machine's, not the namespace's: leave them alone.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
      metricsBindAddress: "127.0.0.1:10249",
      healthzBindAddress: "127.0.0.1:10256",
    }),
  );
  // --v=4 logs each EndpointSlice event and each sync with its time (the clients benchmark reads them); the sync settings stay the defaults.
  return inNs(slot, ns, "kube-proxy", join(bin, "kube-proxy"), [`--config=${config}`, "--v=4"]);
}
