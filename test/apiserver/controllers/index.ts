// Small controllers the tests need (ReplicaSet, PodDisruptionBudget status, a kubelet stand-in).
// Placeholder until filled in: they talk to the server over HTTP like real controllers.
export interface ControllerOptions {
  /** Kubeconfig YAML (user "controller-manager") for the server. */
  kubeconfig: string;
  simulateKubelet: boolean;
  /** CIDR from which the kubelet stand-in hands out pod IPs, default 127.0.10.0/24. */
  podCidr: string;
  replicaSet: boolean;
  podDisruptionBudget: boolean;
}

export interface RunningControllers {
  stop(): Promise<void>;
}

export async function startControllers(_opts: ControllerOptions): Promise<RunningControllers> {
  return { stop: async () => {} };
}
