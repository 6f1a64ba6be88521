// npm run control-plane -- --kubeconfig <file>
// Starts the real control plane (building it first when its cache is empty), writes an admin
// kubeconfig, and runs until interrupted; then removes everything it created.
import { parseArgs } from "node:util";
import { startControlPlane } from "./control-plane.js";
import { GoMissingError, interrupted } from "./processes.js";

const usage = "usage: npm run control-plane -- --kubeconfig <file>";

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { kubeconfig: { type: "string" }, help: { type: "boolean" } } });
  if (values.help) {
    console.log(usage);
    return;
  }
  if (!values.kubeconfig) throw new Error(`--kubeconfig: missing; ${usage}`);
  const cp = await startControlPlane({ onError: (err) => console.error(`kubelet stand-in: ${err.message}`) });
  cp.writeKubeconfig(values.kubeconfig);
  console.log(`control plane ready in ${(cp.startMs / 1000).toFixed(1)} s at ${cp.url}`);
  console.log(`  kubeconfig (admin): ${values.kubeconfig}`);
  console.log(`  node ${cp.nodeName}, pods on ${cp.network.podCidr} in network namespace ${cp.network.namespace}`);
  console.log(`  logs: ${cp.dir}`);
  console.log("Ctrl-C stops it and removes everything it created.");
  await interrupted();
  await cp.stop();
}

main().catch((err) => {
  console.error(err instanceof GoMissingError ? `control plane: ${err.message}` : err);
  process.exit(1);
});
