// `clients [--rate 50] [--window 10] [--scenarios 1,2,3,4] [--rounds 1] [--logs DIR]`: what clients see, on the real node (real kubelet,
// containerd and kube-proxy in a network namespace of the run's own). The operator runs as a
// process inside that namespace (so it reaches pod addresses) against three Deployments of 3
// workload pods, one per variant: the operator's EndpointSlice method, its ReadinessGate method,
// and a plain kubelet readiness probe; same probe settings (period 1 s, timeout 1 s, 2 failures,
// 1 success). A client in the namespace sends `rate` requests/s, each on a new connection with a
// 1 s timeout, to the variant's ClusterIP; four scenarios each: one pod failing /healthz, every
// pod failing /healthz (a shared dependency), one pod hanging, and the first pod healed again.
// Scenario 1 runs `rounds` times and reports where its time went (clients-timeline.ts); --logs
// keeps the operator's, kubelet's, kube-proxy's and kube-controller-manager's logs in DIR.
import { spawn, type ChildProcess } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  createWriteStream,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { CoreV1Api, KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { startRealNode, nodeBinaries, type RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { API_PORT } from "../../hack/control-plane/real-node/components.js";
import { waitFor } from "../support/wait-for.js";
import type { Benchmark } from "./bench.js";
import { numberFlags, scenariosFlag } from "./flags.js";
import { kubeletSplit, operatorSplit, proxySplit, spread, type DrainSplit, type Spread } from "./clients-timeline.js";
import { causes, failed, podsSeen, toPod, Traffic } from "./clients-traffic.js";
import { variantManifests, VARIANTS, type Variant } from "./clients-manifests.js";

const log = (msg: string): void => void process.stderr.write(`clients: ${msg}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Bed {
  node: RealNodeCluster;
  core: CoreV1Api;
  kubeconfigFile: string;
  /** The operator's log file. */
  operatorLog: string;
  kubectl(args: string[], input?: string): Promise<void>;
  /** POSTs `body` to `path` of the pod's control endpoint, from inside the node's namespace. */
  control(pod: V1Pod, path: string, body: object): Promise<Switched>;
}

/** When the control request was sent and answered: the pod switched in between. */
interface Switched {
  sent: number;
  answered: number;
}

export interface SickPod {
  msUntilNoTraffic: number;
  requestsToSickPod: number;
  /** The switch's answer came this long after it was sent (the times count from sending it). */
  switchAnsweredMs: number;
  failed: number;
  total: number;
  /**
   * From the first failing probe result until the last request: what is left once the wait for
   * the prober's next probe (0 to 1 period, each prober's own random phase) is taken out.
   */
  msAfterFirstFailingProbe?: number;
  /** Where the time went, from the same logs (see clients-timeline.ts). */
  split: DrainSplit;
}
export interface VariantResult {
  /** Scenario 1, once per round. */
  sickPod?: SickPod[];
  /** Scenario 1 over its rounds. */
  sickPodSummary?: {
    msUntilNoTraffic: Spread;
    msAfterFirstFailingProbe?: Spread;
    rulesMsAfterFirstFailingProbe?: Spread;
  };
  sharedOutage?: { refused: number; total: number; causes: Record<string, number> };
  hang?: { failed: number; total: number; causes: Record<string, number> };
  recoveryMs?: number | null;
}

interface Opts {
  rate: number;
  window: number;
  rounds: number;
  scenarios: Set<number>;
  /** Where to keep the logs the split is read from. */
  logs?: string | undefined;
}

const FAILURE_THRESHOLD = 2;

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
  // Trace: each probe result, verdict, reconcile and slice write is a line with its time (clients-timeline.ts).
  const out = createWriteStream(bed.operatorLog);
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
      "--log-level",
      "trace",
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

/** The timestamps of the drain of `sick` switched at `from`, from the logs as they stand now. */
function splitOf(bed: Bed, variant: Variant, ns: string, sick: V1Pod, from: number, lastRequestMs: number): DrainSplit {
  const read = (file: string): string => (existsSync(file) ? readFileSync(file, "utf8") : "");
  const name = sick.metadata!.name!;
  const side =
    variant === "readinessprobe"
      ? kubeletSplit(read(join(bed.node.dir, "kubelet.log")), `${ns}/${name}`, from, FAILURE_THRESHOLD)
      : operatorSplit(read(bed.operatorLog), `${ns}/web`, sick.metadata!.uid!, from);
  const after = side.verdictMs === undefined ? from : from + side.verdictMs;
  return {
    ...side,
    ...proxySplit(read(join(bed.node.dir, "kube-proxy.log")), `${ns}/web`, after, from),
    lastRequestMs,
  };
}

/** Scenario 1: the pod fails /healthz; until when it gets client requests, and where the time went. */
async function sickPodRound(
  bed: Bed,
  variant: Variant,
  ns: string,
  traffic: Traffic,
  sick: V1Pod,
  windowMs: number,
): Promise<SickPod> {
  const sickName = sick.metadata!.name!;
  // From when the switch was sent: the time to start a process in the namespace is not the drain's.
  const { sent: flipped, answered } = await bed.control(sick, "/set", { status: 503, body: "sick", path: "/healthz" });
  await sleep(windowMs);
  const after = traffic.between(flipped, flipped + windowMs);
  const reach = toPod(after, sickName, flipped);
  const split = splitOf(bed, variant, ns, sick, flipped, reach.lastMs);
  const out: SickPod = {
    msUntilNoTraffic: reach.lastMs,
    requestsToSickPod: reach.requests,
    failed: failed(after),
    total: after.length,
    switchAnsweredMs: answered - flipped,
    split,
  };
  if (split.firstFailingProbeMs !== undefined) out.msAfterFirstFailingProbe = reach.lastMs - split.firstFailingProbeMs;
  return out;
}

function summary(rounds: SickPod[]): NonNullable<VariantResult["sickPodSummary"]> {
  const out: NonNullable<VariantResult["sickPodSummary"]> = {
    msUntilNoTraffic: spread(rounds.map((r) => r.msUntilNoTraffic)),
  };
  const after = rounds.flatMap((r) => (r.msAfterFirstFailingProbe === undefined ? [] : [r.msAfterFirstFailingProbe]));
  if (after.length > 0) out.msAfterFirstFailingProbe = spread(after);
  // kube-proxy's rules without the pod, from the first failing result: the drain path alone, not
  // when the client's next request happened to pick the pod (each one does with a chance of 1 in 3).
  const rules = rounds.flatMap(({ split: s }) =>
    s.proxySyncEndMs === undefined || s.firstFailingProbeMs === undefined
      ? []
      : [s.proxySyncEndMs - s.firstFailingProbeMs],
  );
  if (rules.length > 0) out.rulesMsAfterFirstFailingProbe = spread(rules);
  return out;
}

async function runVariant(bed: Bed, variant: Variant, opts: Opts): Promise<VariantResult> {
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
  const result: VariantResult = {};
  try {
    await allServing(traffic, pods, `${variant}, start`);
    const sick = pods[0]!;
    const sickName = sick.metadata!.name!;

    // Scenario 4 heals the pod scenario 1 made sick: asking for it runs the last round of 1 too.
    const rounds = opts.scenarios.has(1) ? opts.rounds : opts.scenarios.has(4) ? 1 : 0;
    for (let round = 1; round <= rounds; round++) {
      log(`${variant}: scenario 1 (round ${round}/${rounds}), ${sickName} fails /healthz`);
      (result.sickPod ??= []).push(await sickPodRound(bed, variant, ns, traffic, sick, windowMs));
      if (round < rounds || !opts.scenarios.has(4)) await reset();
    }
    if (result.sickPod) result.sickPodSummary = summary(result.sickPod);

    if (opts.scenarios.has(4)) {
      log(`${variant}: scenario 4, ${sickName} healed`);
      const { sent: healed } = await bed.control(sick, "/reset", {});
      const back = await waitFor(() => traffic.between(healed).find((a) => a.pod === sickName), {
        timeoutMs: 60_000,
        intervalMs: 100,
        what: `${sickName} to get traffic again`,
      }).catch(() => undefined);
      result.recoveryMs = back ? back.at - healed : null;
      await reset();
    }

    if (opts.scenarios.has(2)) {
      log(`${variant}: scenario 2, every pod fails /healthz`);
      const outage = Date.now();
      for (const p of pods) await bed.control(p, "/set", { status: 503, body: "dependency down", path: "/healthz" });
      await sleep(windowMs);
      const dark = traffic.between(outage, outage + windowMs);
      result.sharedOutage = { refused: failed(dark), total: dark.length, causes: causes(dark) };
      await reset();
    }

    if (opts.scenarios.has(3)) {
      log(`${variant}: scenario 3, ${sickName} hangs`);
      const hung = Date.now();
      // "/" is set on its own: the default answer covers every path but "/", which echoes the pod name.
      for (const path of ["/", "/healthz"]) await bed.control(sick, "/set", { status: 200, hang: true, path });
      await sleep(windowMs);
      const during = traffic.between(hung, hung + windowMs);
      result.hang = { failed: failed(during), total: during.length, causes: causes(during) };
      await reset();
    }
    return result;
  } finally {
    traffic.stop();
  }
}

async function runClients(opts: Opts): Promise<Record<Variant, VariantResult>> {
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
      operatorLog: join(dir, "operator.log"),
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
        const script = `const sent = Date.now();
          fetch("http://${pod.status!.podIP}:9901${path}", { method: "POST", body: ${JSON.stringify(JSON.stringify(body))}, signal: AbortSignal.timeout(5000) })
          .then((r) => { process.stdout.write(JSON.stringify({ sent, answered: Date.now() })); process.exit(r.status === 200 ? 0 : 1); }, () => process.exit(1));`;
        return JSON.parse(await node.namespace.exec(process.execPath, ["-e", script])) as Switched;
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
    if (opts.logs)
      keepLogs(opts.logs, [
        join(dir, "operator.log"),
        ...["kubelet", "kube-proxy", "kube-controller-manager"].map((c) => join(node.dir, `${c}.log`)),
      ]);
    operator?.kill("SIGTERM");
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function keepLogs(to: string, files: string[]): void {
  mkdirSync(to, { recursive: true });
  for (const f of files) if (existsSync(f)) copyFileSync(f, join(to, basename(f)));
}

export const clientsBenchmark: Benchmark = {
  name: "clients",
  description:
    "what clients see through kube-proxy on the real node: operator (EndpointSlice, ReadinessGate) against a kubelet readiness probe",
  usage: "clients [--rate 50] [--window 10] [--scenarios 1,2,3,4] [--rounds 1] [--logs DIR]",
  async run(args) {
    const why = notRun();
    if (why) {
      process.stderr.write(`clients: not run: ${why}\n`);
      return 1;
    }
    const flags = numberFlags(args, { rate: 50, window: 10, rounds: 1 }, ["scenarios", "logs"]);
    const opts: Opts = {
      rate: flags.rate,
      window: flags.window,
      rounds: Math.floor(flags.rounds),
      scenarios: scenariosFlag(flags.strings.scenarios),
      logs: flags.strings.logs,
    };
    const variants = await runClients(opts);
    process.stdout.write(
      JSON.stringify({
        bench: "clients",
        rate: opts.rate,
        windowSeconds: opts.window,
        rounds: opts.rounds,
        scenarios: [...opts.scenarios],
        variants,
      }) + "\n",
    );
  },
};
