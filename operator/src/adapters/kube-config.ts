// Loads the client configuration and builds the typed API clients the operator uses.
import { existsSync } from "node:fs";
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  EventsV1Api,
  KubeConfig,
  PolicyV1Api,
} from "@kubernetes/client-node";

const IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

export interface LoadKubeConfigOptions {
  /** Path to a kubeconfig file; wins over everything else. */
  kubeconfig?: string;
  /** Kubeconfig content (YAML or JSON), e.g. from a test server. */
  kubeconfigYaml?: string;
  env?: Record<string, string | undefined>;
}

/**
 * A path wins; otherwise in-cluster config when running in a pod (service host set and a
 * service-account token mounted); otherwise KUBECONFIG or ~/.kube/config.
 */
export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  const env = opts.env ?? process.env;
  try {
    if (opts.kubeconfigYaml !== undefined) kc.loadFromString(opts.kubeconfigYaml);
    else if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
    else if (env.KUBERNETES_SERVICE_HOST && existsSync(IN_CLUSTER_TOKEN)) kc.loadFromCluster();
    else kc.loadFromDefault();
  } catch (cause) {
    throw new Error(`loading kubeconfig${opts.kubeconfig ? ` ${opts.kubeconfig}` : ""}`, { cause });
  }
  if (!kc.getCurrentCluster()) throw new Error("loading kubeconfig: no current cluster (pass --kubeconfig or run in a cluster)");
  return kc;
}

export interface KubeApis {
  core: CoreV1Api;
  discovery: DiscoveryV1Api;
  coordination: CoordinationV1Api;
  events: EventsV1Api;
  policy: PolicyV1Api;
  customObjects: CustomObjectsApi;
}

export function makeApis(kc: KubeConfig): KubeApis {
  return {
    core: kc.makeApiClient(CoreV1Api),
    discovery: kc.makeApiClient(DiscoveryV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    events: kc.makeApiClient(EventsV1Api),
    policy: kc.makeApiClient(PolicyV1Api),
    customObjects: kc.makeApiClient(CustomObjectsApi),
  };
}
