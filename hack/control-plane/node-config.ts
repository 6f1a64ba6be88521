// Configuration files of the real node mode (containerd 2.x, kubelet, kube-proxy, CNI), as pure
// functions of a run's directory and addresses, so every path the node writes stays under the run
// directory and cleanup can find it. Field names follow containerd v2.4 (config version 3) and
// KubeletConfiguration/KubeProxyConfiguration v1beta1/v1alpha1 of Kubernetes 1.37.
import { join } from "node:path";

export interface NodeLayout {
  /** The run directory; everything below is inside it. */
  readonly dir: string;
  readonly nodeName: string;
  /** The node's address inside the run's network namespace. */
  readonly nodeIp: string;
  /** The pods' range, handed out by the CNI host-local IPAM. */
  readonly podCidr: string;
  /** The bridge's address, the pods' gateway (first address of podCidr). */
  readonly podGateway: string;
  readonly serviceCidr: string;
  readonly cniBinDir: string;
  readonly sandboxImage: string;
}

export const nodePaths = (dir: string) => ({
  containerdRoot: join(dir, "containerd", "root"),
  containerdState: join(dir, "containerd", "state"),
  containerdSocket: join(dir, "containerd", "containerd.sock"),
  containerdConfig: join(dir, "containerd", "config.toml"),
  cniConfDir: join(dir, "cni", "net.d"),
  kubeletRoot: join(dir, "kubelet"),
  kubeletConfig: join(dir, "kubelet-config.yaml"),
  kubeProxyConfig: join(dir, "kube-proxy-config.yaml"),
  // The run's own cgroup parent in every v1 hierarchy, removed on cleanup.
  cgroupRoot: `/${dir.split("/").pop() ?? "hpcp"}`,
});

export function containerdConfig(n: NodeLayout): string {
  const p = nodePaths(n.dir);
  return `version = 3
root = ${JSON.stringify(p.containerdRoot)}
state = ${JSON.stringify(p.containerdState)}

[grpc]
  address = ${JSON.stringify(p.containerdSocket)}

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = ${JSON.stringify(n.sandboxImage)}

[plugins."io.containerd.cri.v1.runtime"]
  # Pod network namespaces under the state directory, so cleanup finds them with the run.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [${JSON.stringify(n.cniBinDir)}]
    conf_dir = ${JSON.stringify(p.cniConfDir)}
`;
}

/** Bridge plus host-local IPAM on the pod range, and loopback; pods are reachable only in the netns. */
export function cniConfig(n: NodeLayout): string {
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "hpcp-pods",
      plugins: [
        {
          type: "bridge",
          bridge: "hpcp0",
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: "host-local", ranges: [[{ subnet: n.podCidr, gateway: n.podGateway }]], routes: [{ dst: "0.0.0.0/0" }] },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

// The kubelet answers only inside the run's network namespace, so it takes anonymous requests
// with AlwaysAllow: the API server's logs/exec/port-forward calls need no client certificate.
export function kubeletConfig(n: NodeLayout): string {
  const p = nodePaths(n.dir);
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine has cgroup v1 only; kubelet 1.35+ refuses it unless told not to.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: ${p.cgroupRoot}
containerRuntimeEndpoint: unix://${p.containerdSocket}
address: ${n.nodeIp}
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
failSwapOn: false
resolvConf: ""
registerNode: true
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`;
}

export function kubeProxyConfig(n: NodeLayout, kubeconfig: string): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: ${n.nodeName}
bindAddress: ${n.nodeIp}
clusterCIDR: ${n.podCidr}
clientConnection:
  kubeconfig: ${kubeconfig}
conntrack:
  # Leave the machine's conntrack sysctls alone.
  maxPerCore: 0
`;
}
