// Three operator processes with --shards=on on one API server: every namespace's policy is
// reconciled by exactly one replica, each replica's gauge shows its share, a SIGKILLed replica's
// namespaces move to the others within lease duration + skew margin + one period, a replica
// joining later takes its namespaces through the old owner's acknowledgement, and the request log
// never shows two replicas writing for one namespace at once.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requestsBy, type RequestLogEntry } from "../../hack/apiserver/index.js";
import {
  ACTING_RESOURCES,
  gauge,
  handoverViolations,
  isWriteVerb,
  LEASE_MS,
  markerHolders,
  mostLoaded,
  policyStatus,
  settled as settledOn,
  SKEW_MS,
  startShardReplica,
  type RecordedWrite,
  type ShardReplica,
} from "../support/shard-replicas.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, readinessOf } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";

const PROBE_PERIOD_MS = 1_000;
/** Request latency and timer lateness on a busy machine (shared CPU, four processes). */
const SLACK_MS = 5_000;
const NAMESPACES = ["team-1", "team-2", "team-3", "team-4", "team-5", "team-6"];

let dir: string;
const procs: ShardReplica[] = [];

afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await p.exited;
    if (process.env.DUMP_LOGS) console.log(p.user, JSON.stringify(p.logs.slice(-40), null, 1));
  }
  rmSync(dir, { recursive: true, force: true });
});

const bed = useBed();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hp-shards-"));
});

const startReplica = (user: string) => startShardReplica({ server: bed.cluster.server, dir, user, into: procs });

/** Each namespace: a selector-less Service web, a ReplicaSet of two served pods and a policy. */
async function givenNamespaces(): Promise<void> {
  for (const ns of NAMESPACES) {
    await bed.cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    await bed.cluster.create(aService("web", ns));
    await bed.cluster.create(aReplicaSet("web", ns, 2));
  }
  await waitFor(
    async () => {
      let ready = 0;
      for (const ns of NAMESPACES) {
        const pods = (await bed.cluster.list("v1", "Pod", ns)).filter((p) => p.status?.podIP);
        for (const p of pods) await bed.farm.serve(p.status.podIP as string);
        if (pods.length === 2) ready++;
      }
      return ready === NAMESPACES.length;
    },
    { timeoutMs: 30_000, what: "two pods with IPs in every namespace" },
  );
}

async function createPolicies(): Promise<void> {
  for (const ns of NAMESPACES)
    await bed.cluster.create(aPolicy("web", ns, { periodSeconds: PROBE_PERIOD_MS / 1000, failureThreshold: 1 }));
}

const statusOf = (ns: string) => policyStatus(bed.cluster, ns);

function writesFor(ns: string): RequestLogEntry[] {
  return requestsBy(bed.cluster.server.requestLog, { writes: true }).filter(
    (e) => e.namespace === ns && ACTING_RESOURCES.has(e.resource) && e.user.startsWith("operator-"),
  );
}

/** The operators' writes for the namespaces and their markers, by request log position (the log has no bodies). */
function recordedWrites(): RecordedWrite[] {
  return bed.cluster.server.requestLog.flatMap((e, i): RecordedWrite[] => {
    if (!e.user.startsWith("operator-") || !isWriteVerb(e.verb)) return [];
    const what = `${e.verb} ${e.resource} ${e.name}`;
    const base = { user: e.user, start: i, end: i, code: e.code, what };
    if (NAMESPACES.includes(e.namespace) && ACTING_RESOURCES.has(e.resource))
      return [{ ...base, namespace: e.namespace, marker: false }];
    const about = NAMESPACES.find((ns) => e.resource === "leases" && e.name.includes(`-ns-${ns}-`));
    return about ? [{ ...base, namespace: about, marker: true }] : [];
  });
}

/** Every namespace's marker names a live replica, each status names that owner, and the gauges add up. */
const settled = (replicas: ShardReplica[]) => settledOn(bed.cluster, replicas, NAMESPACES, 2);

describe("namespaces sharded across three replicas", () => {
  it("gives each namespace one writer, moves a killed replica's namespaces within the lease, and hands over to a joiner", async () => {
    await givenNamespaces();
    const replicas = [
      await startReplica("operator-a"),
      await startReplica("operator-b"),
      await startReplica("operator-c"),
    ];
    // Every shard Lease live before there is work: the ring is the same from the first plan on.
    await waitFor(
      async () =>
        (await Promise.all(replicas.map((r) => gauge(r, "healthprobe_shard_replicas_live")))).every((n) => n === 3),
      { timeoutMs: 20_000, what: "each replica to see three live shard Leases" },
    );
    await createPolicies();

    const holders = await waitFor(
      async () => {
        for (const ns of NAMESPACES) if ((await statusOf(ns))?.healthy !== 2) return undefined;
        return settled(replicas);
      },
      { timeoutMs: 30_000, what: "every policy reconciled (two Healthy) and every namespace owned" },
    );
    const userOf = new Map(replicas.map((r) => [r.identity, r.user]));
    // Each replica keeps pods of the namespaces it owns only: it lists and watches them there, never cluster-wide.
    for (const r of replicas) {
      const podReads = requestsBy(bed.cluster.server.requestLog, { user: r.user }).filter(
        (e) => e.resource === "pods" && (e.verb === "list" || e.verb === "watch"),
      );
      const mine = NAMESPACES.filter((ns) => holders.get(ns) === r.identity);
      expect({ user: r.user, podsReadIn: [...new Set(podReads.map((e) => e.namespace))].sort() }).toEqual({
        user: r.user,
        podsReadIn: mine.sort(),
      });
    }
    for (const ns of NAMESPACES) {
      const statusWriters = new Set(
        writesFor(ns)
          .filter((e) => e.resource === "healthprobepolicies")
          .map((e) => e.user),
      );
      expect({ ns, writers: [...statusWriters] }).toEqual({ ns, writers: [userOf.get(holders.get(ns)!)] });
    }
    const shares = replicas.map((r) => `${r.user} ${NAMESPACES.filter((ns) => holders.get(ns) === r.identity).length}`);
    console.log(`shares: ${shares.join(", ")}`);
    // The ring gives each of three replicas two of the six namespaces.
    for (const r of replicas) expect(NAMESPACES.filter((ns) => holders.get(ns) === r.identity)).toHaveLength(2);

    // SIGKILL the replica with the most namespaces (no release, no retire: its lease must expire).
    const victim = mostLoaded(replicas, holders);
    const moving = NAMESPACES.filter((ns) => holders.get(ns) === victim.identity);
    expect(moving.length).toBeGreaterThan(0);
    const lastRenewal = () =>
      requestsBy(bed.cluster.server.requestLog, {
        user: victim.user,
        resource: "leases",
        writes: true,
        succeeded: true,
      })
        .filter((e) => e.name.includes("-shard-"))
        .at(-1)!;
    victim.child.kill("SIGKILL");
    await victim.exited;
    const renewedAt = Date.parse(lastRenewal().time);
    const survivors = replicas.filter((r) => r !== victim);
    const after = await waitFor(() => settled(survivors), {
      timeoutMs: LEASE_MS + SKEW_MS + PROBE_PERIOD_MS + SLACK_MS,
      what: "the killed replica's namespaces owned by the others",
    });
    const takeovers = requestsBy(bed.cluster.server.requestLog, {
      resource: "leases",
      writes: true,
      succeeded: true,
    }).filter(
      (e) => survivors.some((s) => s.user === e.user) && e.name.includes("-ns-") && Date.parse(e.time) > renewedAt,
    );
    console.log(
      `takeover: last namespace acquired ${Date.parse(takeovers.at(-1)!.time) - renewedAt} ms after the killed replica's last renewal (lease ${LEASE_MS} ms + skew ${SKEW_MS} ms)`,
    );

    // The new owner acts: a pod that starts failing in a moved namespace is drained.
    const ns = moving[0]!;
    const pods = (await bed.cluster.list("v1", "Pod", ns)).filter((p) => p.status?.podIP);
    bed.farm.failing(pods[0]!.status.podIP as string);
    await waitFor(
      async () => {
        const slices = await bed.cluster.list(
          "discovery.k8s.io/v1",
          "EndpointSlice",
          ns,
          "kubernetes.io/service-name=web",
        );
        return readinessOf(slices).get(pods[0]!.metadata!.name!) === false && (await statusOf(ns))?.drained === 1;
      },
      { timeoutMs: 20_000, what: `the failing pod of ${ns} drained by its new owner` },
    );
    // Once the new owner wrote there, nobody else did (the killed replica may have written between
    // its last renewal and the kill, which is still its term).
    const newOwner = userOf.get(after.get(ns)!)!;
    const byNew = writesFor(ns).findIndex((e) => e.user === newOwner);
    expect(byNew).toBeGreaterThanOrEqual(0);
    expect(
      writesFor(ns)
        .slice(byNew)
        .filter((e) => e.user !== newOwner),
    ).toEqual([]);

    // A replica joining takes its namespaces only through the old owner's acknowledgement.
    const d = await startReplica("operator-d");
    const all = [...survivors, d];
    const final = await waitFor(
      async () => {
        const h = await settled(all);
        return h && NAMESPACES.some((n) => h.get(n) === d.identity) ? h : undefined;
      },
      { timeoutMs: 30_000, what: "the joining replica to own its share" },
    );
    for (const n of NAMESPACES.filter((x) => final.get(x) === d.identity)) {
      const markerWrites = requestsBy(bed.cluster.server.requestLog, {
        resource: "leases",
        writes: true,
        succeeded: true,
      }).filter((e) => e.name.includes(`-ns-${n}-`));
      const take = markerWrites.findIndex((e) => e.user === "operator-d");
      // The write just before d's is the previous owner's acknowledgement (holder "").
      expect(markerWrites[take - 1]?.user).not.toBe("operator-d");
      expect(take).toBeGreaterThan(0);
    }

    // SIGTERM: the joiner hands its namespaces back and deletes its shard Lease before it exits 0.
    d.child.kill("SIGTERM");
    expect(await d.exited).toEqual({ code: 0, signal: null });
    const shardLeases = await bed.cluster.list(
      "coordination.k8s.io/v1",
      "Lease",
      "healthprobe-system",
      "healthprobe.io/shard-kind=member",
    );
    expect(shardLeases.map((l) => l.spec?.holderIdentity)).not.toContain(d.identity);
    expect([...(await markerHolders(bed.cluster)).values()]).not.toContain(d.identity);
    await waitFor(() => settled(survivors), { timeoutMs: 30_000, what: "the others to own every namespace again" });

    expect(handoverViolations(recordedWrites())).toEqual([]);
  }, 180_000);
});
