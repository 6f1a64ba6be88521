// Chaos on the real node: the kubelet stopped (SIGTERM) and restarted while the operator keeps a
// sick pod drained, then replaces it, and the leader-electing operator's path to kube-apiserver
// dropped with iptables for longer than its lease, then healed (partition.ts). The operator runs
// from source inside the node's network namespace, over a Deployment of workload pods behind a
// selector-less Service (replacement-chaos.ts). The simulation's chaos invariants are checked on
// every world read from the API server, with the evictions from kube-apiserver's audit log; each
// scenario's time to converge is printed (the only timed assertion: a cut-off operator stops
// acting by its renew deadline). The operator killed at the replacement failpoints is
// pod-failpoints.test.ts's, in its pods installed by helm. Runs only with HEALTHPROBE_TEST_NODE=1,
// like the rest of test/real-node.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { CoordinationV1Api, KubeConfig } from "@kubernetes/client-node";
import { startRealNode, type RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { API_PORT } from "../../hack/control-plane/real-node/components.js";
import { installCrd } from "../support/kube-objects.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { waitFor } from "../support/wait-for.js";
import { AUDIT_POLICY } from "./chaos-world.js";
import { leftovers, traceRun } from "./leftovers.js";
import { judgePartition, OPERATOR_API_HOST, partition, withOperatorWrites, writesIn } from "./partition.js";
import { CONVERGE_MS, OPERATOR_NS, ReplacementChaos } from "./replacement-chaos.js";

const enabled = process.env.HEALTHPROBE_TEST_NODE === "1";
// Skipped unless asked for: it needs root and the node's binaries, and takes minutes.
const suite = enabled ? describe : describe.skip;

const NS = "chaos";
const REPLICAS = 4;
/** One replacement, the kubelet scenario's: every budget is exactly used up by the end. */
const BUDGET = 1;
const BUDGET_FLAGS = ["--max-replacements-per-12h", "--max-replacements-per-12h-per-namespace"].flatMap((f) => [
  f,
  String(BUDGET),
]);
/** The operator's leader-election defaults (operator/src/runtime/leader-election.ts), as on the control plane's chaos test. */
const LEASE_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
/** Longer than a lease by a few seconds: its lease has expired by the heal. */
const CUT_MS = LEASE_MS + 5_000;
/** Its deadline timer and log line may lag on two shared cores busy with the node's processes. */
const LOG_LAG_MS = 2_000;

suite("chaos on the real node: the kubelet restarted and the operator cut off", () => {
  let node: RealNodeCluster;
  let dir: string;
  let scene: ReplacementChaos;
  let operator: OperatorProcess | undefined;
  let started = 0;
  const results: string[] = [];

  const startOperator = async (leaderElect = false): Promise<OperatorProcess> => {
    // Its own address of the API server, so a partition can single its traffic out (partition.ts).
    const url = `https://${OPERATOR_API_HOST}:${API_PORT}`;
    const op = startOperatorProcess({
      server: {
        writeKubeconfig: (path: string, user?: string) =>
          writeFileSync(path, node.kubeconfig(user).replace(node.url, url), { mode: 0o600 }),
      },
      dir,
      netns: node.namespace.path,
      // Namespace chaos may use the whole operator-wide cap (its share defaults to less).
      flags: [...BUDGET_FLAGS, ...(leaderElect ? ["--leader-elect"] : [])],
      logFile: join(dir, `operator-${++started}${leaderElect ? "-elect" : ""}.log`),
    });
    await op.started(120_000);
    return op;
  };

  beforeAll(async () => {
    node = await startRealNode({ auditPolicy: withOperatorWrites(AUDIT_POLICY) });
    dir = mkdtempSync(join(tmpdir(), "real-node-chaos-"));
    scene = new ReplacementChaos(node, { namespace: NS, replicas: REPLICAS, budget: BUDGET });
    await installCrd(scene.objects);
    await scene.objects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: OPERATOR_NS } });
    await scene.setUp();
    operator = await startOperator();
    await scene.until(
      (w) => scene.routes(w, []),
      `${REPLICAS} pods Running, Healthy and in rotation (kubelet log: ${node.dir}/kubelet.log)`,
    );
  }, 600_000);

  afterAll(async () => {
    await operator?.stop();
    await scene?.watch.stop();
    await node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    // Numbers for the README and the report, not assertions.
    console.log(
      `chaos on the real node (node up in ${node?.startMs} ms):\n${results.join("\n")}\n${scene?.watch.samples ?? 0} worlds checked`,
    );
  }, 120_000);

  it("keeps a drained pod out and the healthy ones in across a kubelet restart (SIGTERM, down 5 s), then replaces it once", async () => {
    const victim = await scene.pickVictim();
    await scene.setHealth(victim.name, false);
    await scene.until((w) => scene.routes(w, [victim.name]), `${victim.name} drained`);
    const stopped = Date.now();
    await node.restartKubelet({ signal: "SIGTERM", downMs: 5_000 });
    const restarted = Date.now();
    const coordination = (() => {
      const kc = new KubeConfig();
      kc.loadFromString(node.kubeconfig());
      return kc.makeApiClient(CoordinationV1Api);
    })();
    // Ready, and its Lease renewed by the new kubelet: the old one was down from `stopped` on.
    const nodeBack = await waitFor(
      async () => {
        const n = await scene.core.readNode({ name: node.nodeName });
        const lease = await coordination.readNamespacedLease({ name: node.nodeName, namespace: "kube-node-lease" });
        const renewed = new Date(lease.spec?.renewTime ?? 0).getTime();
        return (
          n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") &&
          renewed >= restarted &&
          Date.now()
        );
      },
      {
        timeoutMs: CONVERGE_MS,
        intervalMs: 250,
        what: `node ${node.nodeName} Ready with its Lease renewed by the restarted kubelet (log: ${node.dir}/kubelet.log)`,
      },
    );
    // Still drained, or already replaced if its window ended meanwhile.
    let how = "";
    const routed = await scene.until((w) => {
      how = scene.routes(w, [victim.name]) ? "still drained" : scene.replacedIn(w, victim) ? "already replaced" : "";
      return how !== "";
    }, `${victim.name} drained (or replaced), the others in rotation after the kubelet restart`);
    const at = await scene.expectReplacedOnce(victim);
    results.push(
      `kubelet SIGTERM, down 5 s, restarted (${victim.name} drained): node Ready with a renewed Lease ${nodeBack - restarted} ms after the restart, routing right (${how}) ${Math.max(0, routed - restarted)} ms after it; replaced once ${at - restarted} ms after it (30 s window from its drain, ${restarted - stopped} ms down)`,
    );
    scene.holdsInvariants();
  }, 300_000);

  it("stops acting within its renew deadline while its path to the API server is dropped for longer than its lease, sends nothing stale after the heal, and converges", async () => {
    await operator!.stop();
    const op = (operator = await startOperator(true));
    await waitFor(() => op.logs.some((l) => l.msg === "acquired leader lease"), { what: "the operator to lead" });
    await scene.until((w) => scene.routes(w, []), "every pod in rotation under the leader");
    const victim = scene.livePods(scene.watch.last!)[0]!.name;
    const cutOff = await partition(node.namespace, OPERATOR_API_HOST, API_PORT);
    const cut = Date.now();
    let healed: number;
    try {
      // Something to act on while cut off: its probes still reach the pods.
      await scene.setHealth(victim, false);
      // The fault is held for longer than a lease: that is the scenario, not a synchronisation.
      await new Promise((r) => setTimeout(r, CUT_MS - (Date.now() - cut)));
    } finally {
      // Taken before the rules go: whatever reaches the API server from then on counts as after the heal.
      healed = Date.now();
      await cutOff.heal();
    }
    const at = await scene.until((w) => scene.routes(w, [victim]), `${victim} drained once the operator leads again`);
    const j = judgePartition(writesIn(node.auditLog!), op.logs, { cut, healed, renewDeadlineMs: RENEW_DEADLINE_MS });
    results.push(
      `operator's path to the API server dropped (iptables DROP, leader-elect; ${victim} made sick at the cut) for ${healed - cut} ms: stopped acting ${j.deadline - j.stopped!} ms before its renew deadline (last renewal ${j.renewed - cut} ms after the cut); writes reaching the API server while cut off: ${j.during.length}, after the heal before it held the lease again (${j.reacquired - healed} ms after the heal): ${j.afterHeal.length}; ${victim} drained, routing right ${at - healed} ms after the heal`,
    );
    // The rules held: nothing of it reached the API server, its Lease included.
    expect(j.during.map((w) => `${w.verb} ${w.resource} ${w.namespace}/${w.name} at +${w.at - cut} ms`)).toEqual([]);
    expect(j.renewed).toBeGreaterThan(0);
    expect(j.stopped).toBeDefined();
    expect(j.stopped!).toBeLessThanOrEqual(j.deadline + LOG_LAG_MS);
    expect(Number.isFinite(j.reacquired)).toBe(true);
    // Nothing but its Lease from its renew deadline until it held the lease again: no stale write flushed.
    expect(j.acting.map((w) => `${w.verb} ${w.resource} ${w.namespace}/${w.name} at +${w.at - j.deadline} ms`)).toEqual(
      [],
    );
    await scene.setHealth(victim, true);
    await scene.until((w) => scene.routes(w, []), `${victim} back in rotation`);
    scene.holdsInvariants();
  }, 300_000);

  it("leaves no process, namespace, mount, cgroup, veth or containerd file behind after stop, the restarted kubelet's included", async () => {
    const trace = await traceRun(node.dir, node.namespace.name);
    expect(trace.ids.size).toBeGreaterThan(0);
    await operator?.stop();
    operator = undefined;
    await scene.expectJudgedAll();
    await node.stop();
    expect(await leftovers(trace)).toEqual([]);
  }, 120_000);
});
