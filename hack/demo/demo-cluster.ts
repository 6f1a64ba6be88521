// Everything `make demo` runs: the project's Kubernetes API test server (ReplicaSet controller
// and kubelet stand-in on, pod IPs on loopback), demo.yaml applied after the CRD, a real HTTP
// server on each pod's IP whose /healthz the demo can break and heal, and the operator command
// in a process of its own, pointed at a kubeconfig exactly as in a cluster.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  loadAllYaml,
  makeInformer,
  type V1Pod,
} from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "../apiserver/index.js";
import { installCrd, type Obj } from "../../test/support/kube-objects.js";
import { PodFarm } from "../../test/support/pod-farm.js";
import { startOperatorProcess, type OperatorProcess } from "../../test/support/operator-process.js";
import { waitFor } from "../../test/support/wait-for.js";
import { readSnapshot, type Snapshot } from "./snapshot.js";

export const NAMESPACE = "demo";
export const POLICY = "web";
export const SERVICE = "web";
export const REPLICAS = 5;

export interface DemoClusterOptions {
  /** Where the kubeconfig and the operator log are written. */
  dir: string;
  /** Loopback range for pod IPs; each pod's server listens on its IP. */
  podCidr: string;
  /** "gate": an ordinary Service and drain method ReadinessGate (demo-gate.yaml) instead of demo.yaml. */
  manifest?: "default" | "gate";
}

export interface DemoCluster {
  kubeconfigPath: string;
  operatorLogPath: string;
  api: KubernetesObjectApi;
  server: TestApiServer;
  operator: OperatorProcess;
  /** Makes the pod's /healthz answer 503. */
  breakPod(name: string): void;
  /** Makes the pod's /healthz answer 200 again. */
  healPod(name: string): void;
  broken(): ReadonlySet<string>;
  snapshot(): Promise<Snapshot>;
  /** Stops the operator (SIGTERM, then waits), the pod servers and the API server. */
  stop(): Promise<void>;
  /** Last resort on a crash: kills the operator process without waiting. */
  killNow(): void;
}

export async function startDemoCluster(opts: DemoClusterOptions): Promise<DemoCluster> {
  mkdirSync(opts.dir, { recursive: true });
  const server = await startApiServer({ simulateKubelet: true, podCidr: opts.podCidr, requestLogLimit: 2000 });
  const cleanups: Array<() => Promise<void> | void> = [() => server.stop()];
  const stopAll = async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  };
  try {
    const kubeconfigPath = join(opts.dir, "kubeconfig");
    server.writeKubeconfig(kubeconfigPath);
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig());
    const api = KubernetesObjectApi.makeApiClient(kc);

    await installCrd(api);

    // Every pod the kubelet stand-in starts gets a server on its IP as soon as the watch shows it.
    const farm = new PodFarm();
    cleanups.push(() => farm.close());
    const broken = new Set<string>();
    const ipOf = new Map<string, string>();
    const serving = new Set<string>();
    const serveHealth = (name: string, ip: string) => (broken.has(name) ? farm.failing(ip) : farm.healthy(ip));
    // A pod IP already taken (another demo on the same range) fails the start at once.
    let serveFailed!: (err: Error) => void;
    const servingFailed = new Promise<never>((_, reject) => (serveFailed = reject));
    servingFailed.catch(() => undefined);
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1Pod>(kc, `/api/v1/namespaces/${NAMESPACE}/pods`, () =>
      core.listNamespacedPod({ namespace: NAMESPACE }),
    );
    const onPod = (pod: V1Pod) => {
      const name = pod.metadata?.name;
      const ip = pod.status?.podIP;
      if (!name || !ip || ipOf.get(name) === ip) return;
      ipOf.set(name, ip);
      // An IP handed out again after a pod is gone starts healthy.
      serveHealth(name, ip);
      farm.serve(ip).then(
        () => serving.add(ip),
        (err: unknown) =>
          serveFailed(
            new Error(
              `serving pod ${name} on ${ip}:8080 (is another demo using --pod-cidr ${opts.podCidr}? give this one another range)`,
              { cause: err },
            ),
          ),
      );
    };
    informer.on("add", onPod);
    informer.on("update", onPod);
    // A deleted or evicted pod's process ends with it: its server stops listening, unless a
    // newer pod already serves that IP again.
    informer.on("delete", (pod) => {
      const name = pod.metadata?.name ?? "";
      const ip = ipOf.get(name);
      broken.delete(name);
      ipOf.delete(name);
      if (ip && ![...ipOf.values()].includes(ip)) {
        serving.delete(ip);
        void farm.stop(ip);
      }
    });
    // A dropped watch is restarted, as a controller's would be.
    informer.on("error", () => setTimeout(() => void informer.start().catch(() => undefined), 500));
    await informer.start();
    cleanups.push(() => informer.stop());

    const file = opts.manifest === "gate" ? "./demo-gate.yaml" : "./demo.yaml";
    const manifests = loadAllYaml(readFileSync(new URL(file, import.meta.url), "utf8")) as Obj[];
    for (const m of manifests) await api.create(m);
    const podsServing = waitFor(
      async () => {
        const pods = ((await api.list("v1", "Pod", NAMESPACE)).items ?? []) as Obj[];
        return pods.length === REPLICAS && pods.every((p) => p.status?.podIP && serving.has(p.status.podIP));
      },
      { what: `${REPLICAS} demo pods to run and serve /healthz` },
    );
    await Promise.race([podsServing, servingFailed]);

    const operatorLogPath = join(opts.dir, "operator.log");
    writeFileSync(operatorLogPath, "");
    const operator = startOperatorProcess({
      server,
      dir: opts.dir,
      logFile: operatorLogPath,
      flags: ["--leader-elect", "--insecure-diagnostics"],
    });
    cleanups.push(() => operator.stop());
    const { healthPort } = await operator.started();

    const setHealth = (name: string, failing: boolean) => {
      if (failing) broken.add(name);
      else broken.delete(name);
      const ip = ipOf.get(name);
      if (ip) serveHealth(name, ip);
    };
    return {
      kubeconfigPath,
      operatorLogPath,
      api,
      server,
      operator,
      breakPod: (name) => setHealth(name, true),
      healPod: (name) => setHealth(name, false),
      broken: () => broken,
      snapshot: () =>
        readSnapshot({
          api,
          namespace: NAMESPACE,
          policyName: POLICY,
          serviceName: SERVICE,
          healthPort,
          broken: () => broken,
        }),
      stop: stopAll,
      killNow: () => {
        if (operator.child.exitCode === null && operator.child.signalCode === null) operator.child.kill("SIGKILL");
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
