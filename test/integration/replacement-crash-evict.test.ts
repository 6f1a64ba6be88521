// Crash safety of a replacement, part 2: the operator process dies (SIGKILL) right after the
// eviction, before it writes the outcome to status. Run as a child process, exactly as
// deployed, with `after: 30s` in real time.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { requestsBy } from "../apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, repoRoot, startCluster, type Obj, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "./support/pod-farm.js";

const HPP = "healthprobe.io/v1alpha1";
const AFTER_MS = 30_000;

let cluster: TestCluster;
let farm: PodFarm;
let dir: string;
let children: OperatorProcess[] = [];

beforeEach(async () => {
  // A pod address range of its own: test files, and whole test runs, go side by side.
  cluster = await startCluster({ podCidr: `127.${100 + (process.pid % 150)}.44.0/24` });
  farm = new PodFarm();
  dir = mkdtempSync(join(tmpdir(), "hpp-crash-"));
});

afterEach(async () => {
  for (const c of children) await c.stop();
  if (process.env.DUMP_LOGS) for (const c of children) console.log(c.output.slice(-60).join("\n"));
  children = [];
  await farm.close();
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface OperatorProcess {
  child: ChildProcess;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/** The operator command in its own process (one process: node with tsx's loader), as user "operator". */
function startOperatorProcess(failpoint?: "after-charge" | "after-evict"): OperatorProcess {
  const kubeconfig = join(dir, "kubeconfig");
  cluster.server.writeKubeconfig(kubeconfig, "operator");
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.HEALTHPROBE_TEST_FAILPOINT;
  if (failpoint) env.HEALTHPROBE_TEST_FAILPOINT = failpoint;
  const args = ["--import", "tsx", join(repoRoot, "operator/src/main.ts"), "--kubeconfig", kubeconfig, "--operator-namespace", "healthprobe-system", "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0"];
  const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  const output: string[] = [];
  child.stdout!.on("data", (d) => output.push(String(d)));
  child.stderr!.on("data", (d) => output.push(String(d)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const proc: OperatorProcess = {
    child,
    output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
  children.push(proc);
  return proc;
}

async function livePods(n: number): Promise<Obj[]> {
  const pods = await waitFor(async () => {
    const list = (await cluster.list("v1", "Pod", cluster.namespace, "app=web")).filter((p) => !p.metadata?.deletionTimestamp && p.status?.podIP);
    return list.length === n ? list : undefined;
  }, { what: `${n} running pods` });
  for (const p of pods) await farm.serve(p.status.podIP);
  return pods;
}

async function statusOf(): Promise<Record<string, any> | undefined> {
  return (await cluster.get(HPP, "HealthProbePolicy", "web"))?.status;
}

function evictions(code?: number) {
  return requestsBy(cluster.server.requestLog, { user: "operator", resource: "pods", subresource: "eviction" }).filter((e) => code === undefined || e.code === code);
}

async function operatorLedger(): Promise<Array<Record<string, string>>> {
  const cm = await cluster.get("v1", "ConfigMap", "healthprobe-operator-ledger", "healthprobe-system");
  return JSON.parse(cm?.data?.ledger ?? "[]");
}

describe("replacement crash safety", () => {
  it("killed after the eviction, before its status write: after a restart nothing more is evicted and both ledgers hold the one replacement", async () => {
    await cluster.create(aService("web", cluster.namespace));
    await cluster.create(aReplicaSet("web", cluster.namespace, 2));
    const pods = await livePods(2);
    await cluster.create(aPolicy("web", cluster.namespace, { replacement: { enabled: true, after: "30s", maxPerHour: 1, maxPerDay: 1 } }));
    const first = startOperatorProcess("after-evict");
    await waitFor(async () => (await statusOf())?.healthy === 2, { timeoutMs: 20_000, what: "both pods Healthy" });

    // Both fail: both come due together, and the budget has room for one.
    for (const p of pods) farm.failing(p.status.podIP);
    const before = await waitFor(async () => {
      const st = await statusOf();
      return st?.pods?.filter((p: { state: string; replaceAfter?: string }) => p.state === "Unhealthy" && p.replaceAfter).length === 2 ? st : undefined;
    }, { what: "both pods Unhealthy in status" });
    const unhealthySince = new Map<string, string>(before.pods.map((p: { uid: string; unhealthySince: string }) => [p.uid, p.unhealthySince]));

    expect(await waitFor(() => first.exited, { timeoutMs: AFTER_MS + 20_000, what: "the failpoint to kill the operator" })).toEqual({ code: null, signal: "SIGKILL" });
    const [eviction] = evictions();
    expect(evictions().map((e) => e.code)).toEqual([201]);
    const victim = pods.find((p) => p.metadata!.name === eviction!.name)!;
    const other = pods.find((p) => p !== victim)!;
    const victimUid = victim.metadata!.uid!;
    // The charge was persisted before the eviction; the status write after it never happened.
    const charged = await statusOf();
    expect(charged?.replacements.map((r: { uid: string }) => r.uid)).toEqual([victimUid]);
    expect(charged?.conditions?.find((c: { type: string }) => c.type === "ReplacementBlocked")?.status).not.toBe("True");
    expect((await operatorLedger()).map((e) => e.uid)).toEqual([victimUid]);

    startOperatorProcess();
    // The restarted operator sees the other pod due and holds it back: the budget is spent.
    const after = await waitFor(async () => {
      const st = await statusOf();
      const c = st?.conditions?.find((x: { type: string }) => x.type === "ReplacementBlocked");
      return c?.status === "True" && c.reason === "Budget" ? st : undefined;
    }, { timeoutMs: 20_000, what: "the other pod blocked on Budget" });
    expect(after.conditions.find((c: { type: string }) => c.type === "ReplacementBlocked").message).toContain(`${other.metadata!.name}: hourly budget`);
    expect(after.pods.find((p: { uid: string }) => p.uid === other.metadata!.uid)?.unhealthySince).toBe(unhealthySince.get(other.metadata!.uid!));
    expect(after.replacements.map((r: { uid: string }) => r.uid)).toEqual([victimUid]);
    expect(after.replacedLast24h).toBe(1);
    expect((await operatorLedger()).map((e) => e.uid)).toEqual([victimUid]);
    expect(evictions()).toHaveLength(1);
    expect(await cluster.get("v1", "Pod", other.metadata!.name!)).toBeDefined();
    await waitFor(async () => !(await cluster.get("v1", "Pod", victim.metadata!.name!)), { timeoutMs: 20_000, what: "the evicted pod to be gone" });
  }, 120_000);
});
