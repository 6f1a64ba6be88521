// npx tsx hack/control-plane/real-node/main.ts --kubeconfig <file>
// Starts a real-node cluster (control plane, containerd, kubelet, kube-proxy in a network namespace
// of its own), writes an admin kubeconfig for the host, and runs until interrupted (Ctrl-C or
// SIGTERM); then removes everything it created.
import { parseArgs } from "node:util";
import { interrupted } from "../processes.js";
import { startRealNode } from "./cluster.js";

const usage = "usage: npx tsx hack/control-plane/real-node/main.ts --kubeconfig <file>";

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { kubeconfig: { type: "string" }, help: { type: "boolean" } } });
  if (values.help) {
    console.log(usage);
    return;
  }
  if (!values.kubeconfig) throw new Error(`--kubeconfig: missing; ${usage}`);
  const node = await startRealNode();
  node.writeKubeconfig(values.kubeconfig);
  console.log(`real node ready in ${(node.startMs / 1000).toFixed(1)} s at ${node.url}`);
  console.log(`  kubeconfig (admin): ${values.kubeconfig}`);
  console.log(
    `  node ${node.nodeName} (${node.namespace.nodeIp}), pods on ${node.namespace.podCidr} in network namespace ${node.namespace.name}`,
  );
  console.log(`  logs: ${node.dir}`);
  console.log("Ctrl-C stops it and removes everything it created.");
  await interrupted();
  await node.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
