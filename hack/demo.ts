// `make demo`: the operator's main job on an embedded default. It starts the project's
// Kubernetes API test server (ReplicaSet controller and kubelet stand-in on, pods on loopback
// IPs), serves every demo pod's /healthz from this process, applies the CRD, a selector-less
// Service, a ReplicaSet and a HealthProbePolicy, runs the operator against it exactly as in a
// cluster, and shows a live view. Pods start failing and recovering on a script, so drains,
// the maxUnhealthyPercent cap, restores and a replacement can be watched.
//
//   npx tsx hack/demo.ts [--seconds N] [--plain]
//
// --seconds N stops after N seconds (default: until Ctrl-C); --plain prints a frame per
// second without clearing the screen (for logs and CI).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { request } from "node:http";
import { Writable } from "node:stream";
import { KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { startApiServer } from "../test/apiserver/index.js";
import { PodFarm } from "../test/integration/support/pod-farm.js";
import { aPolicy, aReplicaSet, aService, loadCrd, repoRoot, type Obj } from "../test/integration/support/cluster.js";
import { startOperator } from "../operator/src/operator.js";
import { parseConfig } from "../operator/src/runtime/config.js";
import { createLogger } from "../operator/src/runtime/logger.js";

const { values } = parseArgs({ options: { seconds: { type: "string" }, plain: { type: "boolean", default: false } } });
const seconds = values.seconds !== undefined ? Number(values.seconds) : undefined;
if (seconds !== undefined && (!Number.isFinite(seconds) || seconds <= 0)) {
  process.stderr.write(`--seconds: must be a positive number, got ${values.seconds}\n`);
  process.exit(2);
}
const plain = values.plain || !process.stdout.isTTY;
const NS = "demo";

const server = await startApiServer({ simulateKubelet: true });
const dir = join(repoRoot, ".scratch", "demo");
mkdirSync(dir, { recursive: true });
const kubeconfigPath = join(dir, "kubeconfig");
server.writeKubeconfig(kubeconfigPath);
const kc = new KubeConfig();
kc.loadFromString(server.kubeconfig());
const api = KubernetesObjectApi.makeApiClient(kc);

await api.create(loadCrd());
await waitUntil(async () => {
  try {
    await api.list("healthprobe.io/v1alpha1", "HealthProbePolicy", "default");
    return true;
  } catch {
    return false;
  }
});
for (const name of [NS, "healthprobe-system"]) await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
await api.create(aService("web", NS));
await api.create(aReplicaSet("web", NS, 6));
await api.create(
  aPolicy("web", NS, {
    periodSeconds: 1,
    timeoutSeconds: 1,
    failureThreshold: 3,
    successThreshold: 2,
    maxUnhealthyPercent: 34,
    replacement: { enabled: true, after: "30s", maxPerHour: 1, maxPerDay: 3 },
  }),
);

// Every pod the kubelet stand-in starts gets a real HTTP server on its IP.
const farm = new PodFarm();
const pods = new Map<string, string>(); // name -> ip
async function syncPods(): Promise<Obj[]> {
  const list = ((await api.list("v1", "Pod", NS)).items ?? []) as Obj[];
  for (const p of list) {
    const ip = p.status?.podIP as string | undefined;
    const name = p.metadata?.name ?? "";
    if (!ip || pods.has(name)) continue;
    pods.set(name, ip);
    await farm.serve(ip);
  }
  return list;
}
await waitUntil(async () => (await syncPods()).filter((p) => p.status?.podIP).length >= 6);

const logLines: string[] = [];
const logger = createLogger({
  level: "info",
  destination: new Writable({
    write(chunk, _e, cb) {
      for (const line of String(chunk).split("\n")) {
        if (!line.trim()) continue;
        const o = JSON.parse(line) as Record<string, unknown>;
        logLines.push(`${String(o.time).slice(11, 19)} ${o.level} ${o.msg}${o.pod ? ` pod=${o.pod}` : ""}${o.slice ? ` slice=${o.slice}` : ""}`);
        if (logLines.length > 6) logLines.shift();
      }
      cb();
    },
  }),
});
const parsed = parseConfig(["--health-probe-bind-address", "127.0.0.1:0", "--metrics-bind-address", "127.0.0.1:0", "--operator-namespace", "healthprobe-system"], {});
if (!parsed.ok) throw new Error(parsed.message);
const operator = await startOperator(parsed.config, { kubeconfigYaml: server.kubeconfig("operator"), logger });

// The script: which pods fail when (seconds from start).
const started = Date.now();
const script: Array<{ at: number; what: string; run: () => void }> = [];
const names = () => [...pods.keys()].sort();
const podAt = (i: number) => pods.get(names()[i]!)!;
script.push({ at: 8, what: "pod 1 starts failing (HTTP 503)", run: () => farm.failing(podAt(0)) });
script.push({ at: 16, what: "pods 2 and 3 start failing: the cap keeps one of them in rotation", run: () => (farm.failing(podAt(1)), farm.failing(podAt(2))) });
script.push({ at: 26, what: "pods 2 and 3 recover", run: () => (farm.healthy(podAt(1)), farm.healthy(podAt(2))) });
script.push({ at: 40, what: "pod 1 stays unhealthy past after=30s: it is evicted and its ReplicaSet replaces it", run: () => {} });
const happened: string[] = [];

let stopping = false;
async function shutdown(code: number): Promise<never> {
  stopping = true;
  await operator.stop();
  await farm.close();
  await server.stop();
  process.exit(code);
}
process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

for (;;) {
  if (stopping) break;
  const t = (Date.now() - started) / 1000;
  while (script.length > 0 && script[0]!.at <= t) {
    const step = script.shift()!;
    step.run();
    happened.push(`${step.at.toString().padStart(3)}s  ${step.what}`);
  }
  await syncPods();
  process.stdout.write(await frame(t));
  if (seconds !== undefined && t >= seconds) await shutdown(0);
  await new Promise((r) => setTimeout(r, 1000));
}

async function frame(t: number): Promise<string> {
  const policy = (await api.read({ apiVersion: "healthprobe.io/v1alpha1", kind: "HealthProbePolicy", metadata: { name: "web", namespace: NS } })) as Obj;
  const slices = ((await api.list("discovery.k8s.io/v1", "EndpointSlice", NS)).items ?? []) as Obj[];
  const ready = new Map<string, boolean>();
  for (const s of slices) for (const e of s.endpoints ?? []) ready.set(e.targetRef?.name, !!e.conditions?.ready);
  const debug = (await getJson(`http://127.0.0.1:${operator.healthPort}/debug/targets`)) as { targets: Array<Record<string, any>> };
  const live = new Map(debug.targets.map((d) => [d.pod as string, d]));
  const st = policy.status ?? {};
  const cond = (type: string) => (st.conditions ?? []).find((c: { type: string }) => c.type === type);
  const lines: string[] = [];
  lines.push(`healthprobe-operator demo — ${t.toFixed(0)}s   (kubectl --kubeconfig ${kubeconfigPath} get hpp -n ${NS})`);
  lines.push("");
  lines.push(`policy ${NS}/web  targets=${st.targets ?? 0} healthy=${st.healthy ?? 0} unhealthy=${st.unhealthy ?? 0} unknown=${st.unknown ?? 0} drained=${st.drained ?? 0} replaced(24h)=${st.replacedLast24h ?? 0}`);
  for (const type of ["Ready", "Degraded", "FailOpen", "DrainCapped", "ReplacementBlocked"]) {
    const c = cond(type);
    if (c) lines.push(`  ${type.padEnd(19)} ${String(c.status).padEnd(8)}${c.reason}${c.status === "True" && type !== "Ready" ? `: ${String(c.message).slice(0, 90)}` : ""}`);
  }
  lines.push("");
  lines.push(`${"POD".padEnd(16)}${"IP".padEnd(14)}${"STATE".padEnd(11)}${"IN SLICE".padEnd(10)}${"LAST PROBE".padEnd(22)}REASON`);
  const statusPods = new Map<string, Record<string, any>>((st.pods ?? []).map((p: Record<string, any>) => [p.name, p]));
  for (const name of [...pods.keys()].sort()) {
    const d = live.get(name);
    const s = statusPods.get(name);
    if (!d && !s && !ready.has(name)) continue;
    const inSlice = ready.has(name) ? (ready.get(name) ? "ready" : "drained") : "-";
    lines.push(`${name.padEnd(16)}${(pods.get(name) ?? "").padEnd(14)}${String(d?.state ?? s?.state ?? "-").padEnd(11)}${inSlice.padEnd(10)}${String(d?.result ?? "").padEnd(22)}${String(s?.reason ?? "").slice(0, 70)}`);
  }
  lines.push("");
  lines.push("script:");
  for (const h of happened.slice(-5)) lines.push(`  ${h}`);
  lines.push("operator log:");
  for (const l of logLines) lines.push(`  ${l}`);
  const text = lines.join("\n") + "\n";
  return plain ? `${text}\n` : `\x1b[2J\x1b[H${text}`;
}

function getJson(url: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve(JSON.parse(body)));
    })
      .on("error", reject)
      .end();
  });
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("demo: the API test server did not reach the expected state in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

