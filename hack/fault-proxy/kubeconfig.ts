// A kubeconfig that reaches its cluster through a fault proxy: the same users and tokens, the
// cluster's server set to the proxy's plain-HTTP URL (client-node then needs insecure-skip-tls-verify).
import { parse, stringify } from "yaml";

export function throughProxy(kubeconfigYaml: string, proxyUrl: string): string {
  const kc = parse(kubeconfigYaml) as { clusters?: Array<{ cluster: Record<string, unknown> }> };
  if (!kc.clusters?.length) throw new Error("kubeconfig has no clusters to send through the fault proxy");
  for (const c of kc.clusters) {
    c.cluster.server = proxyUrl;
    c.cluster["insecure-skip-tls-verify"] = true;
    delete c.cluster["certificate-authority"];
    delete c.cluster["certificate-authority-data"];
  }
  return stringify(kc);
}
