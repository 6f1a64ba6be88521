// Sharded replicas on the real control plane (HEALTHPROBE_TEST_CLUSTER=real): three operator
// processes with --shards=on, each its own user, share eight namespaces; the one owning the most is
// killed with SIGKILL and a pod in each of its namespaces starts failing at once. Each of those
// pods must be drained by the namespace's new owner within lease duration + skew margin + one
// probe period (+ slack), and kube-apiserver's audit log must show every write for a namespace
// inside its writer's ownership term, as the namespace's handover marker writes give them.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../hack/control-plane/control-plane.js";
import { installCrd, objectClient, readinessOf } from "../support/kube-objects.js";
import {
  gauge,
  handoverViolations,
  LEASE_MS,
  mostLoaded,
  OPERATOR_NAMESPACE,
  policyStatus,
  settled,
  SKEW_MS,
  startShardReplica,
  writerIntervals,
  writesOutsideTerms,
  type ShardReplica,
} from "../support/shard-replicas.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService } from "../integration/support/cluster.js";
import { shardAuditPolicy, shardWritesInAudit } from "./shard-audit.js";

const onReal = process.env.HEALTHPROBE_TEST_CLUSTER === "real";
const USERS = ["operator-a", "operator-b", "operator-c"];
// Eight over three replicas: the ring gives each at most ceil(8/3) = 3, so each holds two or three.
const NAMESPACES = Array.from({ length: 8 }, (_, i) => `team-${i + 1}`);
const PODS = 2;
const PROBE_PERIOD_MS = 1_000;
/**
 * On top of lease + skew + one period, measured from the kill rather than from the victim's last
 * renewal: that renewal is up to one retry period (500 ms) older than the kill, the survivors
 * re-plan once a retry period, the take is a write and a fresh list, the first probe is
 * scheduled within a period of the take and the drain is one more write. Those alone come to about
 * 2 s; the rest is kube-apiserver, etcd, the controller manager and three operators sharing two
 * cores with whatever else runs on the machine (another control plane's suite, at worst).
 */
const SLACK_MS = 5_000;
const BOUND_MS = LEASE_MS + SKEW_MS + PROBE_PERIOD_MS + SLACK_MS;

let cp: ControlPlane;
let dir: string;
let objects: ReturnType<typeof objectClient>;
const replicas: ShardReplica[] = [];

/** Per namespace: a selector-less Service web, a ReplicaSet whose pods the kubelet stand-in serves. */
async function givenNamespaces(): Promise<void> {
  for (const ns of [OPERATOR_NAMESPACE, ...NAMESPACES])
    await objects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  for (const ns of NAMESPACES) {
    await objects.create(aService("web", ns));
    await objects.create(aReplicaSet("web", ns, PODS));
  }
  await waitFor(
    async () => {
      for (const ns of NAMESPACES) {
        const pods = await objects.list("v1", "Pod", ns);
        const ready = pods.filter(
          (p) => p.status?.podIP && p.status.conditions?.some((c: any) => c.type === "Ready" && c.status === "True"),
        );
        if (ready.length !== PODS) return false;
      }
      return true;
    },
    { timeoutMs: 90_000, what: `${PODS} pods with addresses in every namespace` },
  );
}

/** Resolves with ms from `t0` once the pod is out of its namespace's EndpointSlices. */
const drained = (ns: string, pod: string, t0: number) =>
  waitFor(
    async () => {
      const slices = await objects.list("discovery.k8s.io/v1", "EndpointSlice", ns, "kubernetes.io/service-name=web");
      return readinessOf(slices).get(pod) === false && Date.now() - t0;
    },
    { timeoutMs: BOUND_MS + 30_000, what: `${pod} in ${ns} drained by its new owner` },
  );

/** Reads the writes and marker writes back from the audit log only, and checks them. */
function auditShowsOneWriterAtATime(
  victim: ShardReplica,
  survivors: ShardReplica[],
  moving: string[],
  after: Map<string, string>,
  killedAt: number,
): void {
  const userOf = (identity: string) => replicas.find((r) => r.identity === identity)?.user;
  const record = shardWritesInAudit(readFileSync(cp.auditLog!, "utf8"), USERS, NAMESPACES);
  const runs = writerIntervals(record);
  // Not vacuous: each moved namespace was written by the victim, then by its new owner.
  for (const ns of moving) {
    const users = (runs.get(ns) ?? []).map((r) => r.user);
    expect({ ns, first: users[0], last: users.at(-1) }).toEqual({
      ns,
      first: victim.user,
      last: userOf(after.get(ns)!),
    });
    expect(survivors.map((s) => s.identity)).toContain(after.get(ns));
  }
  expect(writesOutsideTerms(record, userOf, { t0: killedAt * 1000, perUnit: 1000 })).toEqual([]);
  expect(handoverViolations(record)).toEqual([]);
  const markers = record.filter((w) => w.marker).length;
  console.log(
    `audit log: ${record.length - markers} writes by the replicas and ${markers} marker writes for ${NAMESPACES.length} namespaces, none outside its writer's term`,
  );
  // The check can fail on this very record: with the survivors' takes of the moved namespaces
  // left out, as if they wrote there while the victim's term never ended, each moved namespace is
  // reported. test/chaos/shard-audit.test.ts covers each way of overlapping on its own; and on a
  // scratch copy of the operator whose replicas kept acting on a namespace after acknowledging
  // its handover (started one after another, so that namespaces were handed over), the same
  // check over the real audit log reported 111 writes outside their writers' terms.
  const untaken = record.filter((w) => !(w.marker && moving.includes(w.namespace) && w.user !== victim.user));
  const reported = new Set(writesOutsideTerms(untaken, userOf).map((p) => p.split(":")[0]));
  expect([...reported].sort()).toEqual([...moving].sort());
}

(onReal ? describe : describe.skip)("sharded replicas on the real control plane", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "healthprobe-shards-"));
    cp = await startControlPlane({
      users: Object.fromEntries(USERS.map((u) => [u, ["system:masters"]])),
      auditPolicy: shardAuditPolicy(USERS),
    });
    const kc = new KubeConfig();
    kc.loadFromString(cp.kubeconfig("admin"));
    const api = KubernetesObjectApi.makeApiClient(kc);
    objects = objectClient(api, "default");
    await installCrd(api);
    await givenNamespaces();
    // Started side by side: each is a Node process compiling the operator, the slow part of the suite.
    await Promise.all(USERS.map((user) => startShardReplica({ server: cp, dir, user, into: replicas })));
    // Every shard Lease live before there is work: the ring is the same from the first plan on.
    await waitFor(
      async () =>
        (await Promise.all(replicas.map((r) => gauge(r, "healthprobe_shard_replicas_live")))).every((n) => n === 3),
      { timeoutMs: 20_000, what: "each replica to see three live shard Leases" },
    );
    for (const ns of NAMESPACES)
      await objects.create(aPolicy("web", ns, { periodSeconds: PROBE_PERIOD_MS / 1000, failureThreshold: 1 }));
  }, 240_000);

  afterAll(async () => {
    for (const r of replicas) await r.stop("SIGKILL");
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it("drains a SIGKILLed replica's namespaces under their new owners within the bound, and the audit log shows one writer at a time", async () => {
    const holders = await waitFor(
      async () => {
        for (const ns of NAMESPACES) {
          const s = await policyStatus(objects, ns);
          if (s?.healthy !== PODS || !s.conditions?.some((c: any) => c.type === "Ready" && c.status === "True"))
            return undefined;
        }
        return settled(objects, replicas, NAMESPACES, PODS);
      },
      { timeoutMs: 60_000, what: "every policy Ready with two Healthy pods, and every namespace owned" },
    );
    const shares = replicas.map((r) => [...holders.values()].filter((h) => h === r.identity).length);
    console.log(`shares: ${replicas.map((r, i) => `${r.user} ${shares[i]}`).join(", ")}`);
    expect([Math.min(...shares), Math.max(...shares)]).toEqual([2, 3]);

    const victim = mostLoaded(replicas, holders);
    const moving = NAMESPACES.filter((ns) => holders.get(ns) === victim.identity);
    const failing = new Map<string, { name: string; ip: string }>();
    for (const ns of moving) {
      const pod = (await objects.list("v1", "Pod", ns)).sort((a, b) =>
        a.metadata!.name!.localeCompare(b.metadata!.name!),
      )[0]!;
      failing.set(ns, { name: pod.metadata!.name!, ip: pod.status.podIP as string });
    }
    // No release, no retire: its shard Lease must expire before anyone takes its namespaces.
    victim.child.kill("SIGKILL");
    const killedAt = Date.now();
    await victim.exited;
    for (const p of failing.values()) await cp.podServers.set(p.ip, { status: 503, body: "unhealthy\n" });
    const took = await Promise.all(moving.map((ns) => drained(ns, failing.get(ns)!.name, killedAt)));
    console.log(
      `takeover ms per namespace (SIGKILL to the failing pod out of the EndpointSlice, bound ${BOUND_MS} ms): ${moving.map((ns, i) => `${ns} ${took[i]}`).join(", ")}`,
    );
    expect(moving.map((ns, i) => `${ns} ${took[i]} ms`).filter((_, i) => took[i]! > BOUND_MS)).toEqual([]);

    const survivors = replicas.filter((r) => r !== victim);
    const after = await waitFor(() => settled(objects, survivors, NAMESPACES, PODS), {
      timeoutMs: 30_000,
      what: "the survivors to own every namespace",
    });
    auditShowsOneWriterAtATime(victim, survivors, moving, after, killedAt);
  }, 180_000);
});
