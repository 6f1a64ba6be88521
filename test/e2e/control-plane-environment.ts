// The e2e suite on the real control plane (HEALTHPROBE_TEST_CLUSTER=real): kube-apiserver, etcd and
// kube-controller-manager built from Go modules, the chart installed with the real helm (no operator
// replicas: nothing would run their image), and the operator started here as the chart's
// ServiceAccount, with a token from the TokenRequest API, so RBAC checks exactly the chart's rules.
// Pods get addresses on the control plane's network namespace, where its kubelet stand-in serves them.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { startControlPlane } from "../../hack/control-plane/control-plane.js";
import { chartDir, installChartWithoutReplicas } from "../chart/helm.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import type { E2eEnvironment } from "./environment.js";

const RELEASE = "healthprobe";
const SERVICE_ACCOUNT = `${RELEASE}-healthprobe-operator`;

/** The flags the chart's Deployment passes, from the chart's own default values. */
function chartFlags(): string[] {
  const values = parse(readFileSync(join(chartDir, "values.yaml"), "utf8"));
  return [
    "--leader-elect",
    `--leader-election-id=${values.leaderElection.id}`,
    `--ledger-configmap-name=${values.ledgerConfigMapName}`,
    "--log-level",
    "debug",
  ];
}

export async function controlPlaneEnvironment(opts: {
  namespace: string;
  port: number;
  kubectl(kubeconfigPath: string, args: string[], input?: string): Promise<string>;
}): Promise<E2eEnvironment> {
  const kubeletErrors: string[] = [];
  const cp = await startControlPlane({ onError: (err) => kubeletErrors.push(err.message) });
  const dir = mkdtempSync(join(tmpdir(), "healthprobe-e2e-"));
  const admin = join(dir, "admin.kubeconfig");
  let operator: OperatorProcess | undefined;
  const stop = async (): Promise<void> => {
    await operator?.stop();
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    cp.writeKubeconfig(admin);
    await installChartWithoutReplicas({ kubeconfig: admin, namespace: opts.namespace, releaseName: RELEASE });
    const token = (
      await opts.kubectl(admin, ["create", "token", SERVICE_ACCOUNT, "-n", opts.namespace, "--duration=24h"])
    ).trim();
    const user = `system:serviceaccount:${opts.namespace}:${SERVICE_ACCOUNT}`;
    operator = startOperatorProcess({
      server: {
        writeKubeconfig: (path: string) => writeFileSync(path, cp.tokenKubeconfig(user, token), { mode: 0o600 }),
      },
      dir,
      user: "operator",
      flags: chartFlags(),
    });
    await operator.started(90_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const op = operator;
  return {
    mode: "control-plane",
    kubeconfigPath: admin,
    backendPodSpec: () => ({
      containers: [{ name: "web", image: "busybox:1.36", ports: [{ name: "http", containerPort: opts.port }] }],
    }),
    // The kubelet stand-in started a server on every container port when it started the pod.
    serve: async () => {},
    setHealthy: (pod, healthy) =>
      cp.podServers.set(pod.ip, healthy ? { status: 200, body: "ok\n" } : { status: 503, body: "unhealthy\n" }),
    sawHeaderValue: (pod, value) => cp.podServers.sawHeaderValue(pod.ip, value),
    operatorOutput: () =>
      [
        op.output.join("").split("\n").slice(-60).join("\n"),
        kubeletErrors.length ? `--- kubelet stand-in errors ---\n${kubeletErrors.slice(-10).join("\n")}` : "",
      ].join("\n"),
    stop,
  };
}
