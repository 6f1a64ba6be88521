// The simulation on the real control plane (npm run simulate -- --cluster real): kube-apiserver,
// etcd and kube-controller-manager, the kubelet stand-in and the pod servers on loopback, and the
// operator process talking to the API server through the fault proxy, on the wall clock. Each seed
// is a namespace with a ReplicaSet, a Service and a policy; a seeded history changes pod health and
// injects the proxy's faults; the routing and budget invariants are checked over the world read from
// the API server a few times a second, and at the end the operator must converge once faults stop.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../hack/control-plane/control-plane.js";
import { startFaultProxy, type FaultProxy } from "../../hack/fault-proxy/fault-proxy.js";
import { throughProxy } from "../../hack/fault-proxy/kubeconfig.js";
import { checkWorld, evictionsFrom, RealWorldReader } from "../chaos/real-world.js";
import { installCrd } from "../support/kube-objects.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { repoRoot } from "../support/paths.js";
import { waitFor } from "../support/wait-for.js";
import { Rng } from "./prng.js";
import type { World } from "./snapshot.js";

export interface RealRunOptions {
  first: number;
  seeds: number;
  /** Wall-clock length of each seed's history, before the faults stop and it must converge. */
  historyMs: number;
  /** Runs a scratch copy of the operator with this bug planted. */
  plant?: "no-drain-cap";
  log: (line: string) => void;
}

const PORT = 8080;
const CONVERGE_MS = 60_000;
const USER = "operator";

/** The fault proxy's vocabulary, as a seed's history picks it. */
const FAULTS: Array<[string, (p: FaultProxy) => void]> = [
  [
    "503 on a third of lists, 500 on a third of gets",
    (p) => (p.failRate({ rate: 0.3, code: 503, verb: "list" }), p.failRate({ rate: 0.3, code: 500, verb: "get" })),
  ],
  ["409 on half the writes", (p) => p.failRate({ rate: 0.5, code: 409 })],
  [
    "429 Retry-After 1 on half the patches",
    (p) => (
      p.failRate({ rate: 0.5, code: 429, verb: "patch", retryAfterSeconds: 1 }),
      p.failRate({ rate: 0.5, code: 429, verb: "update", retryAfterSeconds: 1 })
    ),
  ],
  ["300 ms latency", (p) => p.addLatency(300)],
  ["dropped watches", (p) => p.dropWatches()],
  ["410 on the next watch", (p) => (p.expireNextWatch(), p.dropWatches())],
  ["2 connection resets", (p) => p.addRule({ count: 2, fault: { kind: "reset" } })],
  ["2 truncated answers", (p) => p.addRule({ count: 2, fault: { kind: "truncate" } })],
  ["stalled watches", (p) => p.stallWatches()],
];

/** A copy of the committed operator with the drain cap removed: every Unhealthy pod may be drained. */
function plantedCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "healthprobe-planted-"));
  execFileSync("sh", ["-c", `git archive HEAD operator package.json tsconfig.json | tar -x -C "${dir}"`], {
    cwd: repoRoot,
  });
  symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"));
  const file = join(dir, "operator", "src", "domain", "drain.ts");
  const src = readFileSync(file, "utf8");
  const line = "const allowed = Math.floor((total * pct) / 100);";
  if (!src.includes(line)) throw new Error(`cannot plant the bug: "${line}" not in drain.ts`);
  writeFileSync(file, src.replace(line, "const allowed = total;"));
  return dir;
}

interface Cluster {
  cp: ControlPlane;
  api: KubernetesObjectApi;
  proxy: FaultProxy;
  op: OperatorProcess;
  reader: RealWorldReader;
}

async function startAll(o: RealRunOptions, dir: string, operatorRoot: string | undefined): Promise<Cluster> {
  const cp = await startControlPlane({ users: { [USER]: ["system:masters"] } });
  const kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfig("admin"));
  const api = KubernetesObjectApi.makeApiClient(kc);
  await installCrd(api);
  await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "healthprobe-system" } });
  const proxy = await startFaultProxy({ upstream: cp.url, name: USER, seed: o.first });
  const op = startOperatorProcess({
    server: {
      writeKubeconfig: (path: string) =>
        writeFileSync(path, throughProxy(cp.kubeconfig(USER), proxy.url), { mode: 0o600 }),
    },
    dir,
    user: USER,
    ...(operatorRoot ? { operatorRoot } : {}),
  });
  await op.started(120_000);
  o.log(
    `control plane ready in ${(cp.startMs / 1000).toFixed(1)} s; operator${operatorRoot ? " (planted: no drain cap)" : ""} through the fault proxy`,
  );
  return { cp, api, proxy, op, reader: new RealWorldReader(cp.kubeconfig("admin")) };
}

interface SeedOutcome {
  violations: string[];
  faults: string[];
  worlds: number;
  ms: number;
}

async function runSeed(c: Cluster, seed: number, historyMs: number): Promise<SeedOutcome> {
  const began = Date.now();
  const rng = new Rng(seed);
  const ns = `sim-${seed}`;
  const replicas = rng.int(4, 6);
  const pct = rng.pick([25, 34, 50]);
  const labels = { app: "web" };
  await c.api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  await c.api.create({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: ns },
    spec: { ports: [{ name: "http", port: 80, targetPort: PORT, protocol: "TCP" }] },
  } as never);
  await c.api.create({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web", namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: "web", image: "busybox:1.36", ports: [{ name: "http", containerPort: PORT }] }] },
      },
    },
  } as never);
  const ready = await waitFor(
    async () => {
      const w = await c.reader.read(ns);
      return w && w.pods.filter((p) => p.ready && p.ip).length === replicas && w;
    },
    { timeoutMs: 90_000, what: `${replicas} ready pods in ${ns}` },
  );
  const pods = ready.pods.map((p) => ({ name: p.name, ip: p.ip! })).sort((a, b) => a.name.localeCompare(b.name));
  const setSick = async (sick: ReadonlySet<number>) => {
    for (const [i, p] of pods.entries())
      await c.cp.podServers.set(
        p.ip,
        sick.has(i) ? { status: 503, body: "unhealthy\n" } : { status: 200, body: "ok\n" },
      );
  };
  await setSick(new Set());
  await c.api.create({
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: { name: "web", namespace: ns },
    spec: {
      serviceName: "web",
      selector: { matchLabels: labels },
      probe: { port: PORT, path: "/healthz", periodSeconds: 1, timeoutSeconds: 1 },
      evaluation: { failureThreshold: 2, successThreshold: 1 },
      drain: { enabled: true, maxUnhealthyPercent: pct },
      replacement: { enabled: false },
    },
  } as never);

  const violations: string[] = [];
  const everInRotation: Record<string, string[]> = {};
  const logFrom = c.proxy.log.length;
  let last: World | undefined;
  let worlds = 0;
  let sampling = true;
  const sampler = (async () => {
    for (let step = 0; sampling; step++) {
      const world = await c.reader.read(ns);
      if (world) {
        last = world;
        worlds++;
        // The first violation of each invariant, as the test-server simulation keeps them.
        for (const v of checkWorld(world, everInRotation, evictionsFrom(c.proxy.log.slice(logFrom), ns, world), step)) {
          const name = v.slice(0, v.indexOf(":"));
          if (!violations.some((x) => x.includes(` ${name}: `))) violations.push(`+${world.at - began} ms ${v}`);
        }
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();

  // The history: health changes (any number of pods failing, the cap's edge included) and faults.
  const faults: string[] = [];
  const end = Date.now() + historyMs;
  while (Date.now() < end) {
    const roll = rng.int(0, 9);
    if (roll < 5) {
      const sick = new Set<number>();
      const k = rng.int(0, replicas - 1);
      while (sick.size < k) sick.add(rng.int(0, replicas - 1));
      await setSick(sick);
    } else if (roll < 8) {
      const [name, apply] = rng.pick(FAULTS);
      apply(c.proxy);
      faults.push(name);
    } else {
      c.proxy.clear();
      c.proxy.dropWatches();
    }
    // The history's own pace on the wall clock, not a synchronisation.
    await new Promise((r) => setTimeout(r, rng.int(1_000, 3_000)));
  }

  // Faults stop, one pod stays sick: the operator must drain exactly it.
  c.proxy.clear();
  c.proxy.dropWatches();
  await setSick(new Set([0]));
  try {
    await waitFor(
      () => {
        const w = last;
        if (!w) return false;
        const inSlices = new Map(w.slices.flatMap((s) => s.endpoints.map((e) => [e.pod, e.ready] as const)));
        return pods.every((p, i) => inSlices.get(p.name) === (i !== 0)) && w.policies[0]?.status?.drained === 1;
      },
      { timeoutMs: CONVERGE_MS, intervalMs: 200, what: `only ${pods[0]!.name} drained` },
    );
  } catch (err) {
    violations.push(`converges after faults stop: ${(err as Error).message}`);
  }
  sampling = false;
  await sampler;
  await c.api.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }).catch(() => undefined);
  return { violations, faults, worlds, ms: Date.now() - began };
}

/** Runs the seeds on one control plane and one operator, a namespace each; returns how many failed. */
export async function runRealSeeds(o: RealRunOptions): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "healthprobe-sim-real-"));
  const operatorRoot = o.plant ? plantedCopy() : undefined;
  let c: Cluster | undefined;
  let failed = 0;
  try {
    c = await startAll(o, dir, operatorRoot);
    const began = Date.now();
    for (let seed = o.first; seed < o.first + o.seeds; seed++) {
      const r = await runSeed(c, seed, o.historyMs);
      const tag = `seed ${seed} (${(r.ms / 1000).toFixed(1)} s, ${r.worlds} worlds checked, faults: ${r.faults.length ? [...new Set(r.faults)].join("; ") : "none"})`;
      if (r.violations.length === 0) {
        o.log(`ok   ${tag}`);
        continue;
      }
      failed++;
      o.log(
        `FAIL ${tag}  replay: npm run simulate -- --cluster real --seed ${seed}${o.plant ? ` --plant ${o.plant}` : ""}`,
      );
      for (const v of r.violations) o.log(`  ${v}`);
    }
    const total = (Date.now() - began) / 1000;
    o.log(
      `${o.seeds} seeds on the real control plane, ${failed} failing, ${total.toFixed(1)} s (${(total / Math.max(1, o.seeds)).toFixed(1)} s per seed)`,
    );
  } finally {
    await c?.op.stop();
    await c?.proxy.stop();
    await c?.cp.stop();
    rmSync(dir, { recursive: true, force: true });
    if (operatorRoot) rmSync(operatorRoot, { recursive: true, force: true });
  }
  return failed;
}
