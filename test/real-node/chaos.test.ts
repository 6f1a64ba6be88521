// Chaos on the real node: the kubelet stopped (SIGTERM) and restarted while the operator keeps a
// sick pod drained, the operator's process SIGKILLed at each replacement failpoint (after the
// ledgers are charged, after the eviction) and started afresh, and the leader-electing operator's
// path to kube-apiserver dropped with iptables for longer than its lease, then healed
// (partition.ts). The operator runs from source inside the node's network namespace, over a
// Deployment of workload pods behind a selector-less Service. The simulation's chaos invariants are
// checked on every world read from the API server, with the evictions from kube-apiserver's audit
// log; each scenario's time to converge is printed (the only timed assertion: a cut-off operator
// stops acting by its renew deadline). Runs only with HEALTHPROBE_TEST_NODE=1, like the rest of
// test/real-node.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { CoordinationV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, type V1Pod } from "@kubernetes/client-node";
import { startRealNode, type RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { API_PORT } from "../../hack/control-plane/real-node/components.js";
import { RealWorldReader } from "../chaos/real-world.js";
import { installCrd, type Obj } from "../support/kube-objects.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { waitFor } from "../support/wait-for.js";
import type { World } from "../simulation/snapshot.js";
import { AUDIT_POLICY, removalsIn, WorldWatch } from "./chaos-world.js";
import { leftovers, traceRun } from "./leftovers.js";
import { judgePartition, OPERATOR_API_HOST, partition, withOperatorWrites, writesIn } from "./partition.js";
import { postScript, WORKLOAD_IMAGE } from "../support/workload-control.js";

const enabled = process.env.HEALTHPROBE_TEST_NODE === "1";
// Skipped unless asked for: it needs root and the node's binaries, and takes minutes.
const suite = enabled ? describe : describe.skip;

const NS = "chaos";
const OPERATOR_NS = "healthprobe-system";
const LEDGER_CONFIGMAP = "healthprobe-operator-ledger";
const REPLICAS = 4;
/** One replacement a scenario, three scenarios: every budget is exactly used up by the end. */
const BUDGET = 3;
const BUDGET_FLAGS = ["--max-replacements-per-12h", "--max-replacements-per-12h-per-namespace"].flatMap((f) => [
  f,
  String(BUDGET),
]);
const CONVERGE_MS = 150_000;
/** The operator's leader-election defaults (operator/src/runtime/leader-election.ts), as on the control plane's chaos test. */
const LEASE_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
/** Longer than a lease by a few seconds: its lease has expired by the heal. */
const CUT_MS = LEASE_MS + 5_000;
/** Its deadline timer and log line may lag on two shared cores busy with the node's processes. */
const LOG_LAG_MS = 2_000;

const deployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: NS },
  spec: {
    replicas: REPLICAS,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 2,
        containers: [
          {
            name: "web",
            image: WORKLOAD_IMAGE,
            imagePullPolicy: "Never",
            ports: [{ name: "http", containerPort: 8080 }],
            env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
          },
        ],
      },
    },
  },
};

const policy = {
  apiVersion: "healthprobe.io/v1alpha1",
  kind: "HealthProbePolicy",
  metadata: { name: "web", namespace: NS },
  spec: {
    serviceName: "web",
    selector: { matchLabels: { app: "web" } },
    probe: { type: "HTTP", port: "http", path: "/healthz", periodSeconds: 1, timeoutSeconds: 1 },
    evaluation: { failureThreshold: 2, successThreshold: 1 },
    drain: { enabled: true, method: "EndpointSlice", maxUnhealthyPercent: 50 },
    // The shortest window the schema allows.
    replacement: { enabled: true, after: "30s", maxPerHour: BUDGET, maxPerDay: BUDGET },
  },
};

interface Victim {
  name: string;
  uid: string;
  /** Its ReplicaSet. */
  owner: string;
  /** The uids of the Deployment's live pods when it was picked. */
  before: Set<string>;
}

/** The Deployment's live pods in `w`, by name. */
const livePods = (w: World) =>
  w.pods.filter((p) => p.labels.app === "web" && !p.terminating).sort((a, b) => a.name.localeCompare(b.name));

/**
 * Whether `w` routes as it should with exactly `drained` out: REPLICAS live kubelet-Ready pods, the
 * slices ready for every one but `drained`, and the status agreeing (drained ones Unhealthy, the
 * others Healthy).
 */
function routes(w: World | undefined, drained: readonly string[]): boolean {
  if (!w) return false;
  const pods = livePods(w);
  const ready = new Map(w.slices.flatMap((s) => s.endpoints.map((e) => [e.pod, e.ready] as const)));
  const status = w.policies[0]?.status;
  return (
    pods.length === REPLICAS &&
    pods.every(
      (p) =>
        p.ready &&
        ready.get(p.name) === !drained.includes(p.name) &&
        status?.pods[p.name] === (drained.includes(p.name) ? "Unhealthy" : "Healthy"),
    ) &&
    status?.drained === drained.length
  );
}

suite("chaos on the real node: the kubelet restarted, the operator killed at failpoints and cut off", () => {
  let node: RealNodeCluster;
  let core: CoreV1Api;
  let objects: KubernetesObjectApi;
  let dir: string;
  let watch: WorldWatch;
  let operator: OperatorProcess | undefined;
  let started = 0;
  const replaced: string[] = [];
  const results: string[] = [];

  const startOperator = async (
    failpoint?: "after-charge" | "after-evict",
    leaderElect = false,
  ): Promise<OperatorProcess> => {
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
      logFile: join(dir, `operator-${++started}${failpoint ? `-${failpoint}` : ""}${leaderElect ? "-elect" : ""}.log`),
      ...(failpoint ? { failpoint } : {}),
    });
    await op.started(120_000);
    return op;
  };

  const setHealth = async (pod: string, healthy: boolean): Promise<void> => {
    const ip = watch.last!.pods.find((p) => p.name === pod)!.ip!;
    const [path, body] = healthy ? ["/reset", {}] : ["/set", { status: 503, body: "sick", path: "/healthz" }];
    await node.namespace.exec(process.execPath, ["-e", postScript(`http://${ip}:9901${path}`, body)]);
  };

  const until = (check: (w: World | undefined) => boolean, what: string): Promise<number> =>
    waitFor(() => check(watch.last) && watch.last!.at, { timeoutMs: CONVERGE_MS, intervalMs: 100, what });

  /** The policy's ledger (status.replacements) and the operator-wide one (the ConfigMap), as pod uids. */
  const ledgers = async (): Promise<{ policy: string[]; operator: string[] }> => {
    const p = (await objects.read({
      apiVersion: "healthprobe.io/v1alpha1",
      kind: "HealthProbePolicy",
      metadata: { name: "web", namespace: NS },
    })) as Obj;
    const cm = await core
      .readNamespacedConfigMap({ name: LEDGER_CONFIGMAP, namespace: OPERATOR_NS })
      .catch(() => undefined);
    const entries = JSON.parse(cm?.data?.ledger ?? "[]") as Array<{ uid: string }>;
    return {
      policy: (p.status?.replacements ?? []).map((e: { uid: string }) => e.uid),
      operator: entries.map((e) => e.uid),
    };
  };

  const removalsOf = (pod: string) => removalsIn(node.auditLog!).filter((r) => r.namespace === NS && r.pod === pod);

  /** A pod in rotation to make sick: the first by name. */
  const pickVictim = async (): Promise<Victim> => {
    const p = livePods(watch.last!)[0]!;
    const pod = await core.readNamespacedPod({ name: p.name, namespace: NS });
    return {
      name: p.name,
      uid: p.uid,
      owner: pod.metadata?.ownerReferences?.find((r) => r.controller)?.name ?? "",
      before: new Set(livePods(watch.last!).map((x) => x.uid)),
    };
  };

  const replacedIn = (w: World | undefined, victim: Victim): boolean =>
    !!w && !w.pods.some((p) => p.uid === victim.uid) && routes(w, []);

  /** The victim gone, its ReplicaSet's new pod Running, Healthy and in rotation; checks it was evicted exactly once and charged once. */
  async function expectReplacedOnce(victim: Victim): Promise<number> {
    const at = await until((w) => replacedIn(w, victim), `${victim.name} replaced and every pod in rotation`);
    replaced.push(victim.uid);
    expect(removalsOf(victim.name).map((r) => `${r.verb} ${r.code}`)).toEqual(["evict 201"]);
    const l = await ledgers();
    expect(l.policy.filter((u) => u === victim.uid)).toHaveLength(1);
    expect(l.operator.filter((u) => u === victim.uid)).toHaveLength(1);
    expect(new Set(l.policy)).toEqual(new Set(replaced));
    expect(new Set(l.operator)).toEqual(new Set(replaced));
    // Exactly one new pod, of the victim's ReplicaSet, Running (routes() saw it Healthy and in rotation).
    const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: "app=web" })).items.filter(
      (p: V1Pod) => !p.metadata?.deletionTimestamp,
    );
    const fresh = pods.filter((p) => !victim.before.has(p.metadata!.uid!));
    expect(fresh.map((p) => [p.metadata?.ownerReferences?.find((r) => r.controller)?.name, p.status?.phase])).toEqual([
      [victim.owner, "Running"],
    ]);
    return at;
  }

  const holdsInvariants = (): void => expect(watch.violations).toEqual([]);

  beforeAll(async () => {
    node = await startRealNode({ auditPolicy: withOperatorWrites(AUDIT_POLICY) });
    dir = mkdtempSync(join(tmpdir(), "real-node-chaos-"));
    const kc = new KubeConfig();
    kc.loadFromString(node.kubeconfig());
    core = kc.makeApiClient(CoreV1Api);
    objects = KubernetesObjectApi.makeApiClient(kc);
    await installCrd(objects);
    for (const name of [NS, OPERATOR_NS])
      await objects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    await objects.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: NS },
      spec: { ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] },
    } as Obj);
    await objects.create(deployment as Obj);
    await objects.create(policy as Obj);
    watch = new WorldWatch(new RealWorldReader(node.kubeconfig()), NS, node.auditLog!, BUDGET);
    watch.start();
    operator = await startOperator();
    await until(
      (w) => routes(w, []),
      `${REPLICAS} pods Running, Healthy and in rotation (kubelet log: ${node.dir}/kubelet.log)`,
    );
  }, 600_000);

  afterAll(async () => {
    await operator?.stop();
    await watch?.stop();
    await node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    // Numbers for the README and the report, not assertions.
    console.log(
      `chaos on the real node (node up in ${node?.startMs} ms):\n${results.join("\n")}\n${watch?.samples ?? 0} worlds checked`,
    );
  }, 120_000);

  it("keeps a drained pod out and the healthy ones in across a kubelet restart (SIGTERM, down 5 s), then replaces it once", async () => {
    const victim = await pickVictim();
    await setHealth(victim.name, false);
    await until((w) => routes(w, [victim.name]), `${victim.name} drained`);
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
        const n = await core.readNode({ name: node.nodeName });
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
    const routed = await until((w) => {
      how = routes(w, [victim.name]) ? "still drained" : replacedIn(w, victim) ? "already replaced" : "";
      return how !== "";
    }, `${victim.name} drained (or replaced), the others in rotation after the kubelet restart`);
    const at = await expectReplacedOnce(victim);
    results.push(
      `kubelet SIGTERM, down 5 s, restarted (${victim.name} drained): node Ready with a renewed Lease ${nodeBack - restarted} ms after the restart, routing right (${how}) ${Math.max(0, routed - restarted)} ms after it; replaced once ${at - restarted} ms after it (30 s window from its drain, ${restarted - stopped} ms down)`,
    );
    holdsInvariants();
  }, 300_000);

  it.each(["after-charge", "after-evict"] as const)(
    "replaces a pod exactly once when the operator's process is SIGKILLed %s and a fresh one finishes",
    async (failpoint) => {
      const victim = await pickVictim();
      await setHealth(victim.name, false);
      await until((w) => routes(w, [victim.name]), `${victim.name} drained`);
      // Its window runs on while the processes change: a restart restores unhealthySince from status.
      await operator!.stop();
      operator = undefined;
      const dying = await startOperator(failpoint);
      let timer: NodeJS.Timeout | undefined;
      const exit = await Promise.race([
        dying.exited,
        new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), CONVERGE_MS))),
      ]);
      clearTimeout(timer);
      expect(exit).toEqual({ code: null, signal: "SIGKILL" });
      const killed = Date.now();
      const atKill = await ledgers();
      expect(atKill.policy.filter((u) => u === victim.uid)).toHaveLength(1);
      expect(atKill.operator.filter((u) => u === victim.uid)).toHaveLength(1);
      expect(removalsOf(victim.name).map((r) => `${r.verb} ${r.code}`)).toEqual(
        failpoint === "after-charge" ? [] : ["evict 201"],
      );
      operator = await startOperator();
      const freshUp = Date.now();
      const at = await expectReplacedOnce(victim);
      results.push(
        `operator SIGKILLed ${failpoint} (${victim.name}): replaced once, every pod in rotation ${at - killed} ms after the kill (${at - freshUp} ms after the fresh process was ready)`,
      );
      holdsInvariants();
    },
    300_000,
  );

  it("stops acting within its renew deadline while its path to the API server is dropped for longer than its lease, sends nothing stale after the heal, and converges", async () => {
    await operator!.stop();
    const op = (operator = await startOperator(undefined, true));
    await waitFor(() => op.logs.some((l) => l.msg === "acquired leader lease"), { what: "the operator to lead" });
    await until((w) => routes(w, []), "every pod in rotation under the leader");
    const victim = livePods(watch.last!)[0]!.name;
    const cutOff = await partition(node.namespace, OPERATOR_API_HOST, API_PORT);
    const cut = Date.now();
    let healed: number;
    try {
      // Something to act on while cut off: its probes still reach the pods.
      await setHealth(victim, false);
      // The fault is held for longer than a lease: that is the scenario, not a synchronisation.
      await new Promise((r) => setTimeout(r, CUT_MS - (Date.now() - cut)));
    } finally {
      // Taken before the rules go: whatever reaches the API server from then on counts as after the heal.
      healed = Date.now();
      await cutOff.heal();
    }
    const at = await until((w) => routes(w, [victim]), `${victim} drained once the operator leads again`);
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
    await setHealth(victim, true);
    await until((w) => routes(w, []), `${victim} back in rotation`);
    holdsInvariants();
  }, 300_000);

  it("leaves no process, namespace, mount, cgroup, veth or containerd file behind after stop, the restarted kubelet's included", async () => {
    const trace = await traceRun(node.dir, node.namespace.name);
    expect(trace.ids.size).toBeGreaterThan(0);
    await operator?.stop();
    operator = undefined;
    await watch.stop();
    holdsInvariants();
    // The budget invariants judged the real evictions, each against a world that still held its pod.
    expect(watch.evictions().map((e) => e.before.pods.find((p) => p.name === e.pod)?.uid)).toEqual(replaced);
    await node.stop();
    expect(await leftovers(trace)).toEqual([]);
  }, 120_000);
});
