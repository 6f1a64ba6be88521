// Kubeconfig for the test server: plain HTTP, TLS checks off (client-node insists), user name as token.
import { stringify } from "yaml";

export function kubeconfigYaml(server: string, user = "admin", namespace = "default"): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "healthprobe-test", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: user, user: { token: user } }],
    contexts: [{ name: user, context: { cluster: "healthprobe-test", user, namespace } }],
    "current-context": user,
    preferences: {},
  });
}
