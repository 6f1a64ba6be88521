// Where the e2e suite runs. With KUBECONFIG set: a real cluster on which the chart installed the
// operator. With HEALTHPROBE_TEST_CLUSTER=real: the real control plane built from Go modules
// (hack/control-plane), the chart installed by helm and the operator started here as its
// ServiceAccount. With HEALTHPROBE_TEST_CLUSTER=real-node: the real node (a real kubelet, kube-proxy
// and containerd), the operator's own image installed by helm, pods of the workload image
// (real-node-environment.ts). Otherwise: the project's API test server (pods get loopback addresses from its
// kubelet stand-in) and the operator started here as a child process. Either way the suite talks
// to Kubernetes through nothing but a kubeconfig.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1PodSpec } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "../../hack/apiserver/index.js";
import { controlPlaneEnvironment } from "./control-plane-environment.js";
import { realNodeEnvironment } from "./real-node-environment.js";
import { kubectlBin, repoRoot } from "../support/paths.js";
import { waitFor } from "../support/wait-for.js";

export const BACKEND_PORT = 8080;
export const HEALTH_PATH = "/healthz";

/** A pod of the scenario's ReplicaSet, as the backends need to know it. */
export interface BackendPod {
  name: string;
  namespace: string;
  ip: string;
}

export interface E2eEnvironment {
  mode: "cluster" | "control-plane" | "real-node" | "test-server";
  kubeconfigPath: string;
  /** The pod template's spec: an HTTP server on BACKEND_PORT answering HEALTH_PATH. */
  backendPodSpec(): V1PodSpec;
  /** Starts serving for these pods where the suite itself serves (test-server mode). */
  serve(pods: BackendPod[]): Promise<void>;
  /** Makes one pod's health endpoint fail (404/503) or succeed again. */
  setHealthy(pod: BackendPod, healthy: boolean): Promise<void>;
  /** Whether a request to the pod carried a header with this value; undefined where the suite cannot see (a cluster's busybox). */
  sawHeaderValue?(pod: BackendPod, value: string): Promise<boolean>;
  /** Only on the test server: the server, to read its request log. */
  server?: TestApiServer;
  /** The operator's output so far, for failure messages (asynchronous where it comes from kubectl logs). */
  operatorOutput(): string | Promise<string>;
  stop(): Promise<void>;
}

export const OPERATOR_USER = "operator";
export const OPERATOR_NAMESPACE = "healthprobe-system";

/** Which environment startEnvironment() will start, known before it starts: tests that do not apply there are skipped. */
export function environmentMode(): E2eEnvironment["mode"] {
  if (process.env.KUBECONFIG) return "cluster";
  if (process.env.HEALTHPROBE_TEST_CLUSTER === "real") return "control-plane";
  if (process.env.HEALTHPROBE_TEST_CLUSTER === "real-node") return "real-node";
  return "test-server";
}

/** How long pods and the operator may take to settle: a cluster pulls images, the real node starts containers, the test server is ready in milliseconds. */
export function settleMs(): number {
  return { cluster: 180_000, "real-node": 120_000, "control-plane": 30_000, "test-server": 30_000 }[environmentMode()];
}

/** How long startEnvironment() may take: the real node starts its components, builds the operator's image unless given one, and helm installs it. */
export function startMs(): number {
  return environmentMode() === "real-node" ? 600_000 : 60_000;
}

export async function startEnvironment(): Promise<E2eEnvironment> {
  const mode = environmentMode();
  if (mode === "cluster") return clusterEnvironment(process.env.KUBECONFIG!.split(":")[0]!);
  if (mode === "control-plane")
    return controlPlaneEnvironment({ namespace: OPERATOR_NAMESPACE, port: BACKEND_PORT, kubectl });
  if (mode === "real-node")
    return realNodeEnvironment({ namespace: OPERATOR_NAMESPACE, port: BACKEND_PORT, healthPath: HEALTH_PATH });
  return testServerEnvironment();
}

function clusterEnvironment(kubeconfigPath: string): E2eEnvironment {
  return {
    mode: "cluster",
    kubeconfigPath,
    backendPodSpec: () => ({
      containers: [
        {
          name: "web",
          image: "busybox:1.36",
          // busybox httpd serves /www; removing /www/healthz turns the health endpoint into a 404.
          command: [
            "sh",
            "-c",
            `mkdir -p /www && echo ok > /www${HEALTH_PATH} && exec httpd -f -p ${BACKEND_PORT} -h /www`,
          ],
          ports: [{ name: "http", containerPort: BACKEND_PORT }],
          readinessProbe: { tcpSocket: { port: BACKEND_PORT }, periodSeconds: 1 },
        },
      ],
      terminationGracePeriodSeconds: 1,
    }),
    serve: async () => {},
    setHealthy: async (pod, healthy) => {
      const cmd = healthy ? `echo ok > /www${HEALTH_PATH}` : `rm -f /www${HEALTH_PATH}`;
      await kubectl(kubeconfigPath, ["exec", "-n", pod.namespace, pod.name, "--", "sh", "-c", cmd]);
    },
    operatorOutput: () =>
      "(the operator runs in the cluster: kubectl -n healthprobe-system logs deploy/healthprobe-healthprobe-operator)",
    stop: async () => {},
  };
}

async function testServerEnvironment(): Promise<E2eEnvironment> {
  // A /24 of its own: other suites on this machine serve on the default 127.0.10.0/24 at the same time.
  const podCidr = `127.${100 + Math.floor(Math.random() * 150)}.${Math.floor(Math.random() * 250)}.0/24`;
  const server = await startApiServer({ simulateKubelet: true, podCidr });
  const dir = mkdtempSync(join(tmpdir(), "healthprobe-e2e-"));
  const adminKubeconfig = join(dir, "admin.kubeconfig");
  const operatorKubeconfig = join(dir, "operator.kubeconfig");
  server.writeKubeconfig(adminKubeconfig);
  // Its own user, so the request log tells the operator's requests from the suite's.
  server.writeKubeconfig(operatorKubeconfig, OPERATOR_USER);
  try {
    // kubectl as a user would type it; server-side apply keeps it idempotent.
    await kubectl(
      adminKubeconfig,
      ["apply", "--server-side", "-f", "-"],
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${OPERATOR_NAMESPACE}\n`,
    );
  } catch (err) {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const healthy = new Map<string, boolean>();
  const backends = new Map<string, Server>();
  const headerValues = new Map<string, Set<string>>();
  let output = "";
  const operator: ChildProcess = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(repoRoot, "operator", "src", "main.ts"),
      "--kubeconfig",
      operatorKubeconfig,
      "--metrics-bind-address",
      "127.0.0.1:0",
      "--health-probe-bind-address",
      "127.0.0.1:0",
      "--operator-namespace",
      OPERATOR_NAMESPACE,
      "--log-level",
      "debug",
    ],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, KUBECONFIG: "" } },
  );
  operator.stdout!.setEncoding("utf8").on("data", (d: string) => (output += d));
  operator.stderr!.setEncoding("utf8").on("data", (d: string) => (output += d));
  const exited = new Promise<void>((r) => operator.once("exit", () => r()));

  return {
    mode: "test-server",
    kubeconfigPath: adminKubeconfig,
    server,
    backendPodSpec: () => ({
      containers: [{ name: "web", image: "busybox:1.36", ports: [{ name: "http", containerPort: BACKEND_PORT }] }],
    }),
    serve: async (pods) => {
      for (const pod of pods) {
        if (backends.has(pod.ip)) continue;
        healthy.set(pod.ip, true);
        // The kubelet stand-in hands out loopback addresses: every 127.x.y.z is local on Linux.
        const s = createServer((req, res) => {
          const seen = headerValues.get(pod.ip) ?? new Set<string>();
          for (let i = 1; i < req.rawHeaders.length; i += 2) seen.add(req.rawHeaders[i]!);
          headerValues.set(pod.ip, seen);
          const ok = req.url === HEALTH_PATH && healthy.get(pod.ip) === true;
          res.writeHead(ok ? 200 : 503, { "content-type": "text/plain", connection: "close" });
          res.end(ok ? "ok\n" : "unhealthy\n");
        });
        await new Promise<void>((r, reject) => {
          s.once("error", reject);
          s.listen(BACKEND_PORT, pod.ip, () => r());
        });
        backends.set(pod.ip, s);
      }
    },
    setHealthy: async (pod, value) => {
      if (!backends.has(pod.ip)) throw new Error(`no backend serves ${pod.name} at ${pod.ip}`);
      healthy.set(pod.ip, value);
    },
    sawHeaderValue: async (pod, value) => headerValues.get(pod.ip)?.has(value) ?? false,
    operatorOutput: () => output.split("\n").slice(-60).join("\n"),
    stop: async () => {
      if (operator.exitCode === null && operator.signalCode === null) {
        operator.kill("SIGTERM");
        const killTimer = setTimeout(() => operator.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(killTimer);
      }
      for (const s of backends.values()) {
        s.closeAllConnections();
        await new Promise<void>((r) => s.close(() => r()));
      }
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits for `probe`; on a timeout the error carries the operator's output so far. */
export async function waitExplained<T>(
  env: E2eEnvironment,
  probe: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs: number,
): Promise<T> {
  try {
    return await waitFor(probe, { timeoutMs, intervalMs: 200, what });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- operator output ---\n${await env.operatorOutput()}`, {
      cause: err,
    });
  }
}

/** The CRD: the chart installs it on a cluster; on the test server the suite applies the generated one. */
export async function ensureCrd(kubeconfigPath: string): Promise<void> {
  const crdInstalled = await kubectl(kubeconfigPath, [
    "get",
    "crd",
    "healthprobepolicies.healthprobe.io",
    "-o",
    "name",
  ]).then(
    () => true,
    () => false,
  );
  if (!crdInstalled)
    await kubectl(
      kubeconfigPath,
      ["apply", "--server-side", "-f", "-"],
      readFileSync(join(repoRoot, "crds", "healthprobe.io_healthprobepolicies.yaml"), "utf8"),
    );
  await waitFor(() => kubectl(kubeconfigPath, ["get", "hpp", "-A", "-o", "name"]).then(() => true), {
    timeoutMs: 30_000,
    what: "the HealthProbePolicy kind to be served",
  });
}

/** kubectl with this kubeconfig and a fresh discovery cache; rejects with its stderr on failure. */
export function kubectl(kubeconfigPath: string, args: string[], input?: string): Promise<string> {
  const cache = mkdtempSync(join(tmpdir(), "healthprobe-e2e-kubectl-"));
  return new Promise<string>((resolvePromise, reject) => {
    const child = spawn(kubectlBin, ["--kubeconfig", kubeconfigPath, "--cache-dir", cache, ...args], {
      cwd: repoRoot,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", (err) => reject(new Error(`running kubectl ${args.join(" ")}`, { cause: err })));
    child.on("close", (code) => {
      rmSync(cache, { recursive: true, force: true });
      if (code === 0) resolvePromise(stdout);
      else reject(new Error(`kubectl ${args.join(" ")} exited ${code}: ${stderr.trim()}`));
    });
    child.stdin.end(input ?? "");
  });
}
