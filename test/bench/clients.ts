// `clients [--rate 50] [--window 10]`: what clients see, on the real node (real kubelet,
// containerd and kube-proxy in a network namespace of the run's own). The operator runs as a
// process inside that namespace (so it reaches pod addresses) against three Deployments of 3
// workload pods, one per variant: the operator's EndpointSlice method, its ReadinessGate method,
// and a plain kubelet readiness probe; same probe settings (period 1 s, timeout 1 s, 2 failures,
// 1 success). A client in the namespace sends `rate` requests/s, each on a new connection with a
// 1 s timeout, to the variant's ClusterIP; four scenarios each: one pod failing /healthz, every
// pod failing /healthz (a shared dependency), one pod hanging, and the first pod healed again.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { startRealNode, nodeBinaries, type RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { API_PORT } from "../../hack/control-plane/real-node/components.js";
import { waitFor } from "../support/wait-for.js";
import type { Benchmark } from "./bench.js";
import { numberFlags } from "./flags.js";
import { causes, failed, podsSeen, toPod, Traffic } from "./clients-traffic.js";
import { variantManifests, VARIANTS, type Variant } from "./clients-manifests.js";

const log = (msg: string): void => void process.stderr.write(`clients: ${msg}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Bed {
  node: RealNodeCluster;
  core: CoreV1Api;
  kubeconfigFile: string;
  kubectl(args: string[], input?: string): Promise<void>;
  /** POSTs `body` to `path` of the pod's control endpoint, from inside the node's namespace. */
  control(pod: V1Pod, path: string, body: object): Promise<void>;
}

export interface SickPod {
  msUntilNoTraffic: number;
  requestsToSickPod: number;
  failed: number;
  total: number;
}
export interface VariantResult {
  sickPod: SickPod;
  sharedOutage: { refused: number; total: number; causes: Record<string, number> };
  hang: { failed: number; total: number; causes: Record<string, number> };
  recoveryMs: number | null;
}

function notRun(): string | undefined {
  if (process.getuid?.() !== 0) return "needs root (the real node creates network namespaces, cgroups and mounts)";
  try {
    nodeBinaries();
  } catch (err) {
    return `no node binaries: ${(err as Error).message}`;
  }
  return undefined;
}

/** The operator inside the node's namespace, talking to kube-apiserver on the namespace's loopback. */
function startOperator(bed: Bed, dir: string): ChildProcess {
  const kubeconfig = join(dir, "operator-kubeconfig");
  writeFileSync(kubeconfig, bed.node.kubeconfig("admin").replace(bed.node.url, `https://127.0.0.1:${API_PORT}`), {
    mode: 0o600,
  });
  const out = createWriteStream(join(dir, "operator.log"));
  const child = spawn(
    "nsenter",
    [
      `--net=${bed.node.namespace.path}`,
      "--",
      process.execPath,
      "--import",
      "tsx",
      "operator/src/main.ts",
      "--kubeconfig",
      kubeconfig,
    ],
    {
      cwd: process.cwd(),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  return child;
}

async function readyPods(bed: Bed, ns: string): Promise<V1Pod[]> {
  return waitFor(
    async () => {
      const pods = (await bed.core.listNamespacedPod({ namespace: ns, labelSelector: "app=web" })).items.filter(
        (p) => !p.metadata?.deletionTimestamp,
      );
      return pods.length === 3 && pods.every((p) => p.status?.phase === "Running" && p.status.podIP) ? pods : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 500, what: `3 running pods in ${ns}` },
  );
}

async function allServing(traffic: Traffic, pods: V1Pod[], what: string): Promise<void> {
  const names = pods.map((p) => p.metadata!.name!);
  await waitFor(
    () => {
      const seen = podsSeen(traffic, 2_000);
      return names.every((n) => seen.has(n));
    },
    { timeoutMs: 90_000, intervalMs: 250, what: `every pod to get client traffic (${what})` },
  );
}

async function runVariant(bed: Bed, variant: Variant, opts: { rate: number; window: number }): Promise<VariantResult> {
  const ns = `clients-${variant}`;
  await bed.kubectl(["apply", "-f", "-"], variantManifests(variant, ns));
  const pods = await readyPods(bed, ns);
  const ip = (await bed.core.readNamespacedService({ name: "web", namespace: ns })).spec!.clusterIP!;
  const traffic = Traffic.start(bed.node.namespace.path, `http://${ip}/`, opts.rate);
  const windowMs = opts.window * 1000;
  const reset = async (): Promise<void> => {
    for (const p of pods) await bed.control(p, "/reset", {});
    await allServing(traffic, pods, `${variant}, reset`);
  };
  try {
    await allServing(traffic, pods, `${variant}, start`);
    const sick = pods[0]!;
    const sickName = sick.metadata!.name!;

    log(`${variant}: scenario 1, ${sickName} fails /healthz`);
    const flipped = Date.now();
    await bed.control(sick, "/set", { status: 503, body: "sick", path: "/healthz" });
    await sleep(windowMs);
    const after = traffic.between(flipped, flipped + windowMs);
    const reach = toPod(after, sickName, flipped);
    const sickPod: SickPod = {
      msUntilNoTraffic: reach.lastMs,
      requestsToSickPod: reach.requests,
      failed: failed(after),
      total: after.length,
    };

    log(`${variant}: scenario 4, ${sickName} healed`);
    const healed = Date.now();
    await bed.control(sick, "/reset", {});
    const back = await waitFor(() => traffic.between(healed).find((a) => a.pod === sickName), {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: `${sickName} to get traffic again`,
    }).catch(() => undefined);
    const recoveryMs = back ? back.at - healed : null;
    await reset();

    log(`${variant}: scenario 2, every pod fails /healthz`);
    const outage = Date.now();
    for (const p of pods) await bed.control(p, "/set", { status: 503, body: "dependency down", path: "/healthz" });
    await sleep(windowMs);
    const dark = traffic.between(outage, outage + windowMs);
    const sharedOutage = { refused: failed(dark), total: dark.length, causes: causes(dark) };
    await reset();

    log(`${variant}: scenario 3, ${sickName} hangs`);
    const hung = Date.now();
    // "/" is set on its own: the default answer covers every path but "/", which echoes the pod name.
    for (const path of ["/", "/healthz"]) await bed.control(sick, "/set", { status: 200, hang: true, path });
    await sleep(windowMs);
    const during = traffic.between(hung, hung + windowMs);
    const hang = { failed: failed(during), total: during.length, causes: causes(during) };
    await reset();
    return { sickPod, sharedOutage, hang, recoveryMs };
  } finally {
    traffic.stop();
  }
}

async function runClients(opts: { rate: number; window: number }): Promise<Record<Variant, VariantResult>> {
  const started = Date.now();
  log("starting the real node");
  const node = await startRealNode();
  const dir = mkdtempSync(join(tmpdir(), "bench-clients-"));
  let operator: ChildProcess | undefined;
  try {
    const kubeconfigFile = join(dir, "kubeconfig");
    node.writeKubeconfig(kubeconfigFile);
    const kc = new KubeConfig();
    kc.loadFromString(node.kubeconfig());
    const kubectlBin = join(process.cwd(), ".tools", "bin", "kubectl");
    const bed: Bed = {
      node,
      core: kc.makeApiClient(CoreV1Api),
      kubeconfigFile,
      // Asynchronous: the host's bridge to kube-apiserver runs in this process's event loop.
      kubectl: (args, input) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(
            kubectlBin,
            ["--kubeconfig", kubeconfigFile, "--cache-dir", join(dir, "cache"), ...args],
            { stdio: ["pipe", "ignore", "pipe"] },
          );
          let err = "";
          child.stderr.on("data", (d) => (err += d));
          child.on("error", reject);
          child.on("close", (code) =>
            code === 0 ? resolve() : reject(new Error(`kubectl ${args.join(" ")} failed (${code}): ${err}`)),
          );
          child.stdin.end(input ?? "");
        }),
      control: async (pod, path, body) => {
        const script = `fetch("http://${pod.status!.podIP}:9901${path}", { method: "POST", body: ${JSON.stringify(JSON.stringify(body))}, signal: AbortSignal.timeout(5000) })
          .then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1));`;
        await node.namespace.exec(process.execPath, ["-e", script]);
      },
    };
    await bed.kubectl([
      "apply",
      "-f",
      join(process.cwd(), "charts", "healthprobe-operator", "crds", "healthprobe.io_healthprobepolicies.yaml"),
    ]);
    await bed.kubectl([
      "wait",
      "--for=condition=Established",
      "crd/healthprobepolicies.healthprobe.io",
      "--timeout=60s",
    ]);
    operator = startOperator(bed, dir);
    log(`node up in ${node.startMs} ms; operator log in ${join(dir, "operator.log")}`);
    const results = {} as Record<Variant, VariantResult>;
    for (const v of VARIANTS) {
      if (operator.exitCode !== null)
        throw new Error(`the operator exited (${operator.exitCode}); see ${join(dir, "operator.log")}`);
      results[v] = await runVariant(bed, v, opts);
      log(`${v}: ${JSON.stringify(results[v])}`);
    }
    log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
    return results;
  } finally {
    operator?.kill("SIGTERM");
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const clientsBenchmark: Benchmark = {
  name: "clients",
  description:
    "what clients see through kube-proxy on the real node: operator (EndpointSlice, ReadinessGate) against a kubelet readiness probe",
  usage: "clients [--rate 50] [--window 10]",
  async run(args) {
    const why = notRun();
    if (why) {
      process.stderr.write(`clients: not run: ${why}\n`);
      return 1;
    }
    const opts = numberFlags(args, { rate: 50, window: 10 });
    const variants = await runClients(opts);
    process.stdout.write(
      JSON.stringify({ bench: "clients", rate: opts.rate, windowSeconds: opts.window, variants }) + "\n",
    );
  },
};
