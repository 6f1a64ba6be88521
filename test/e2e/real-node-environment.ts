// The e2e suite on the real node (HEALTHPROBE_TEST_CLUSTER=real-node): kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler, containerd, a real kubelet and kube-proxy in a network
// namespace of the run's own (hack/control-plane/real-node). The operator's image, built from the
// Dockerfile, is imported into the node's containerd and installed by `helm install` with the
// chart's defaults, so the operator runs in its pods, as its ServiceAccount, with leader election.
// The backends are pods of the workload image on the pod network; the suite switches their health
// through each pod's control endpoint, from inside the node's namespace (the only place those
// addresses are routed).
//
//   HEALTHPROBE_OPERATOR_ARCHIVE  an OCI archive of the operator's image, built once by the caller
//                                 (make e2e-real-node); unset: built here (about a minute)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRealNode, type RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { chartDir, helmAsync } from "../chart/helm.js";
import { buildOperatorImage } from "../support/operator-image.js";
import { kubectl, type BackendPod, type E2eEnvironment } from "./environment.js";
import { postScript, WORKLOAD_IMAGE } from "../support/workload-control.js";

const RELEASE = "healthprobe";
/** The workload's control endpoint (hack/images/workload/control.go). */
export const CONTROL_PORT = 9901;
export const TCP_PORT = 9000;
export const GRPC_PORT = 9090;

function operatorArchive(): string {
  return process.env.HEALTHPROBE_OPERATOR_ARCHIVE || buildOperatorImage();
}

/** A node script run inside the node's namespace: GET `url` and print the body; exits non-zero unless 200. */
const getScript = (url: string): string => `
fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(5000) })
  .then(async (r) => { const t = await r.text(); if (r.status !== 200) { console.error(r.status, t); process.exit(1); } process.stdout.write(t); }, (err) => { console.error(err.message); process.exit(1); });
`;

export interface RealNodeEnvironment extends E2eEnvironment {
  mode: "real-node";
  node: RealNodeCluster;
  /** POSTs `body` to one of the pod's control paths (/set, /grpc, /close, /listen). */
  control(pod: BackendPod, path: string, body: object): Promise<void>;
}

export async function realNodeEnvironment(opts: {
  namespace: string;
  port: number;
  healthPath: string;
  helmValues?: string[];
}): Promise<RealNodeEnvironment> {
  const archive = operatorArchive();
  const node = await startRealNode();
  const dir = mkdtempSync(join(tmpdir(), "healthprobe-e2e-"));
  const admin = join(dir, "admin.kubeconfig");
  const stop = async (): Promise<void> => {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    node.importArchive(archive);
    node.writeKubeconfig(admin);
    // The image is on the node already: Never proves the kubelet runs this one and pulls nothing.
    const values = ["image.pullPolicy=Never", "logLevel=debug", ...(opts.helmValues ?? [])].flatMap((v) => [
      "--set",
      v,
    ]);
    const installed = await helmAsync(
      [
        "install",
        RELEASE,
        chartDir,
        "--namespace",
        opts.namespace,
        "--create-namespace",
        ...values,
        "--wait",
        "--timeout",
        "5m",
        "--kubeconfig",
        admin,
      ],
      {
        timeoutMs: 330_000,
      },
    );
    if (installed.code !== 0)
      throw new Error(`helm install onto the real node failed (exit ${installed.code}): ${installed.stderr}`);
  } catch (err) {
    await stop();
    throw err;
  }
  const control = async (pod: BackendPod, path: string, body: object): Promise<void> => {
    await node.namespace.exec(process.execPath, ["-e", postScript(`http://${pod.ip}:${CONTROL_PORT}${path}`, body)]);
  };
  return {
    mode: "real-node",
    node,
    kubeconfigPath: admin,
    backendPodSpec: () => ({
      automountServiceAccountToken: false,
      // The kubelet sets <SERVICE>_PORT=tcp://… for every Service of the namespace: a Service named
      // tcp or grpc would hand the workload TCP_PORT or GRPC_PORT it cannot parse.
      enableServiceLinks: false,
      containers: [
        {
          name: "web",
          image: WORKLOAD_IMAGE,
          imagePullPolicy: "Never",
          ports: [
            { name: "http", containerPort: opts.port },
            { name: "tcp", containerPort: TCP_PORT },
            { name: "grpc", containerPort: GRPC_PORT },
          ],
          env: [
            { name: "HTTP_PORT", value: String(opts.port) },
            { name: "TCP_PORT", value: String(TCP_PORT) },
            { name: "GRPC_PORT", value: String(GRPC_PORT) },
            { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          ],
        },
      ],
      terminationGracePeriodSeconds: 2,
    }),
    // The kubelet started the workload server in every pod.
    serve: async () => {},
    setHealthy: (pod, healthy) =>
      control(
        pod,
        "/set",
        healthy
          ? { status: 200, body: "ok", path: opts.healthPath }
          : { status: 503, body: "unhealthy", path: opts.healthPath },
      ),
    control,
    // The workload records the newest 1000 requests with their headers (GET /requests).
    sawHeaderValue: async (pod, value) => {
      const seen = JSON.parse(
        await node.namespace.exec(process.execPath, ["-e", getScript(`http://${pod.ip}:${CONTROL_PORT}/requests`)]),
      ) as Array<{ headers?: Record<string, string[]> }> | null;
      return (seen ?? []).some((r) => Object.values(r.headers ?? {}).some((vs) => vs.includes(value)));
    },
    // Read only when a wait fails, asynchronously: the host's bridge to kube-apiserver runs in this process.
    operatorOutput: async () => {
      const logs = [
        "logs",
        "-n",
        opts.namespace,
        "-l",
        "app.kubernetes.io/name=healthprobe-operator,app.kubernetes.io/component!=test",
        "--prefix",
        "--tail=40",
      ];
      const pods = [
        "get",
        "pods",
        "-A",
        "-o",
        "custom-columns=NS:.metadata.namespace,NAME:.metadata.name,PHASE:.status.phase,RESTARTS:.status.containerStatuses[0].restartCount,LAST:.status.containerStatuses[0].lastState.terminated",
      ];
      const [a, b] = await Promise.all(
        [logs, pods].map((args) => kubectl(admin, args).catch((err: Error) => err.message)),
      );
      return `${a}\n--- pods ---\n${b}`;
    },
    stop,
  };
}
