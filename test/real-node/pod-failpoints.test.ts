// Chaos on the real node with the operator as a user runs it: its image built from the Dockerfile
// and imported into the node's containerd, `helm install`ed with the chart's defaults (two
// replicas, shards on) but for the budgets, and its pod killed at each replacement failpoint
// (after the ledgers are charged, after the eviction). As an admin would, the test sets
// HEALTHPROBE_TEST_FAILPOINT and HEALTHPROBE_TEST_FAILPOINT_ACTION=stop on the chart's Deployment
// (its strategy made Recreate, so that at the disarm no pod with the failpoint is left or made
// again to take the namespace over and stop too): the pod that reaches the failpoint says so on
// stderr and freezes there, sending nothing more. The test removes the failpoint from the
// Deployment and, once the frozen pod's shard Lease shows it renews nothing, deletes it with grace
// period 0 (the kubelet SIGKILLs its container); the new pods take its namespace over once that
// Lease has expired, and finish the replacement. Same workload, policy, checks and invariants as
// chaos.test.ts (replacement-chaos.ts), the operator being the chart's ServiceAccount in the audit
// log; each scenario's time from the kill to converged is printed. Runs only with
// HEALTHPROBE_TEST_NODE=1, like the rest of test/real-node.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { AppsV1Api, CoordinationV1Api, KubeConfig, type V1Lease } from "@kubernetes/client-node";
import { startRealNode, type RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { chartDir, helmAsync, kubectl as runKubectl } from "../chart/helm.js";
import { buildOperatorImage } from "../support/operator-image.js";
import { waitFor } from "../support/wait-for.js";
import { auditPolicyFor } from "./chaos-world.js";
import { leftovers, traceRun } from "./leftovers.js";
import { CONVERGE_MS, OPERATOR_NS, ReplacementChaos } from "./replacement-chaos.js";

const enabled = process.env.HEALTHPROBE_TEST_NODE === "1";
// Skipped unless asked for: it needs root and the node's binaries, and takes minutes.
const suite = enabled ? describe : describe.skip;

const NS = "failpoints";
const REPLICAS = 4;
/** One replacement a scenario, two scenarios: every budget is exactly used up by the end. */
const BUDGET = 2;
const RELEASE = "healthprobe-operator";
/** The chart's Deployment and ServiceAccount: its full name, the release's. */
const DEPLOYMENT = RELEASE;
const OPERATOR_SA = `system:serviceaccount:${OPERATOR_NS}:${RELEASE}`;
const OPERATOR_PODS = "app.kubernetes.io/name=healthprobe-operator";
/** Twice the chart's shards.retryPeriod: a replica alive renews its shard Lease at least this often. */
const FROZEN_MS = 4_000;

type Failpoint = "after-charge" | "after-evict";

suite("chaos on the real node: the operator's pod, installed by helm, killed at each replacement failpoint", () => {
  let node: RealNodeCluster;
  let scratch: string;
  let kubeconfig: string;
  let scene: ReplacementChaos;
  let apps: AppsV1Api;
  let leases: CoordinationV1Api;
  const results: string[] = [];

  const kubectl = async (args: string[]): Promise<string> => {
    const r = await runKubectl(args, kubeconfig, { timeoutMs: 60_000 });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  const setEnv = (env: string[]) => kubectl(["set", "env", `deployment/${DEPLOYMENT}`, "-n", OPERATOR_NS, ...env]);

  /** The shard Leases of the ring: the replicas' (by identity) and the namespaces' handover markers. */
  const shardLeases = async (kind: "member" | "marker"): Promise<V1Lease[]> =>
    (await leases.listNamespacedLease({ namespace: OPERATOR_NS, labelSelector: `healthprobe.io/shard-kind=${kind}` }))
      .items;
  /** The identity (<pod name>_<random>) whose marker holds NS; "" when released. */
  const owner = async (): Promise<string> =>
    (await shardLeases("marker")).find((l) => l.metadata?.annotations?.["healthprobe.io/shard-namespace"] === NS)?.spec
      ?.holderIdentity ?? "";
  const podOf = (identity: string) => identity.split("_")[0]!;

  /** The operator pod that wrote the failpoint's line (operator/src/main.ts) to its log, read through the API. */
  const frozenAt = (failpoint: Failpoint): Promise<string> =>
    waitFor(
      async () => {
        const pods = await scene.core.listNamespacedPod({ namespace: OPERATOR_NS, labelSelector: OPERATOR_PODS });
        for (const p of pods.items) {
          const log = await scene.core
            .readNamespacedPodLog({ name: p.metadata!.name!, namespace: OPERATOR_NS })
            .catch(() => "");
          if (log.includes(`healthprobe test failpoint ${failpoint} reached: stopped`)) return p.metadata!.name!;
        }
        return undefined;
      },
      { timeoutMs: CONVERGE_MS, intervalMs: 250, what: `an operator pod to stop at its ${failpoint} failpoint` },
    );

  /** Once the frozen pod's shard Lease is FROZEN_MS old: alive, it would have renewed it. Returns its renewTime. */
  const renewalsStopped = (pod: string): Promise<number> =>
    waitFor(
      async () => {
        const own = (await shardLeases("member")).find((l) => podOf(l.spec?.holderIdentity ?? "") === pod);
        const renewed = new Date(own?.spec?.renewTime ?? NaN).getTime();
        return Date.now() - renewed >= FROZEN_MS ? renewed : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: `${pod}'s shard Lease to stay unrenewed for ${FROZEN_MS} ms` },
    );

  beforeAll(async () => {
    const archive = buildOperatorImage();
    node = await startRealNode({ auditPolicy: auditPolicyFor(OPERATOR_SA) });
    node.importArchive(archive);
    scratch = mkdtempSync(join(tmpdir(), "real-node-failpoints-"));
    kubeconfig = join(scratch, "kubeconfig");
    node.writeKubeconfig(kubeconfig);
    const kc = new KubeConfig();
    kc.loadFromString(node.kubeconfig());
    apps = kc.makeApiClient(AppsV1Api);
    leases = kc.makeApiClient(CoordinationV1Api);
    const values = [
      "image.pullPolicy=Never",
      `maxReplacementsPer12h=${BUDGET}`,
      `maxReplacementsPer12hPerNamespace=${BUDGET}`,
    ];
    const installed = await helmAsync(
      [
        ...["install", RELEASE, chartDir, "-n", OPERATOR_NS, "--create-namespace", "--kubeconfig", kubeconfig],
        ...values.flatMap((v) => ["--set", v]),
        ...["--wait", "--timeout", "5m"],
      ],
      { timeoutMs: 330_000 },
    );
    if (installed.code !== 0) throw new Error(`helm install failed (exit ${installed.code}): ${installed.stderr}`);
    const strategy = { spec: { strategy: { type: "Recreate", rollingUpdate: null } } };
    await kubectl([
      "patch",
      `deployment/${DEPLOYMENT}`,
      "-n",
      OPERATOR_NS,
      "--type=merge",
      "-p",
      JSON.stringify(strategy),
    ]);
    scene = new ReplacementChaos(node, { namespace: NS, replicas: REPLICAS, budget: BUDGET, user: OPERATOR_SA });
    await scene.setUp();
    await scene.until(
      (w) => scene.routes(w, []),
      `${REPLICAS} pods Running, Healthy and in rotation (kubelet log: ${node.dir}/kubelet.log)`,
    );
  }, 900_000);

  afterAll(async () => {
    await scene?.watch.stop();
    await node?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    // Numbers for the README and the report, not assertions.
    console.log(
      `the operator's pod killed at failpoints on the real node (node up in ${node?.startMs} ms):\n${results.join("\n")}\n${scene?.watch.samples ?? 0} worlds checked`,
    );
  }, 120_000);

  it.each(["after-charge", "after-evict"] as const)(
    "replaces a pod exactly once when the operator's pod is killed %s and the new pods take its namespace over",
    async (failpoint) => {
      const victim = await scene.pickVictim();
      await scene.setHealth(victim.name, false);
      await scene.until((w) => scene.routes(w, [victim.name]), `${victim.name} drained`);
      // Armed while its window runs: the new pods restore unhealthySince from status.
      await setEnv([`HEALTHPROBE_TEST_FAILPOINT=${failpoint}`, "HEALTHPROBE_TEST_FAILPOINT_ACTION=stop"]);
      const frozen = await frozenAt(failpoint);
      const stopped = Date.now();
      expect(podOf(await owner())).toBe(frozen);
      // No pod of the armed template is left or made again: the other replica stops, and the frozen
      // one, terminating now, never answers its SIGTERM.
      await setEnv(["HEALTHPROBE_TEST_FAILPOINT-", "HEALTHPROBE_TEST_FAILPOINT_ACTION-"]);
      const renewed = await renewalsStopped(frozen);
      // At the kill: exactly what the operator had done when it reached the failpoint.
      await scene.expectChargedOnce(victim, failpoint === "after-charge" ? [] : ["evict 201"]);
      expect(podOf(await owner())).toBe(frozen);
      await scene.core.deleteNamespacedPod({ name: frozen, namespace: OPERATOR_NS, gracePeriodSeconds: 0 });
      const killed = Date.now();
      const at = await scene.expectReplacedOnce(victim);
      const next = podOf(await owner());
      expect(next).not.toBe(frozen);
      const deployment = await apps.readNamespacedDeployment({ name: DEPLOYMENT, namespace: OPERATOR_NS });
      expect(deployment.spec?.template.spec?.containers[0]?.env?.map((e) => e.name)).toEqual([
        "POD_NAMESPACE",
        "POD_NAME",
      ]);
      results.push(
        `operator's pod ${frozen} stopped at ${failpoint} (${victim.name}), killed ${killed - stopped} ms after (its shard Lease last renewed ${stopped - renewed} ms before the stop was seen): replaced once by ${next}, every pod in rotation ${at - killed} ms after the kill`,
      );
      scene.holdsInvariants();
    },
    300_000,
  );

  it("leaves no process, namespace, mount, cgroup, veth or containerd file behind after stop, the killed pod's included", async () => {
    const trace = await traceRun(node.dir, node.namespace.name);
    expect(trace.ids.size).toBeGreaterThan(0);
    await scene.expectJudgedAll();
    await node.stop();
    expect(await leftovers(trace)).toEqual([]);
  }, 120_000);
});
