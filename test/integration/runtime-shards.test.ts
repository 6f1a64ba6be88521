// Three operator processes with --shards=on on one API server: every namespace's policy is
// reconciled by exactly one replica, each replica's gauge shows its share, a SIGKILLed replica's
// namespaces move to the others within lease duration + skew margin + one period, a replica
// joining later takes its namespaces through the old owner's acknowledgement, and the request log
// never shows two replicas writing for one namespace at once.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requestsBy, type RequestLogEntry } from "../apiserver/index.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, readinessOf } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";

const LEASE_MS = 3_000;
const RENEW_DEADLINE_MS = 2_000;
const RETRY_MS = 500;
const SKEW_MS = 500;
const SHARD_FLAGS = [
  "--shards=on",
  `--shard-lease-duration=${LEASE_MS}ms`,
  `--shard-renew-deadline=${RENEW_DEADLINE_MS}ms`,
  `--shard-retry-period=${RETRY_MS}ms`,
  `--shard-skew-margin=${SKEW_MS}ms`,
  "--insecure-diagnostics",
];
const PROBE_PERIOD_MS = 1_000;
/** Request latency and timer lateness on a busy machine (shared CPU, four processes). */
const SLACK_MS = 5_000;
const NAMESPACES = ["team-1", "team-2", "team-3", "team-4", "team-5", "team-6"];
const WRITE_KINDS = new Set(["endpointslices", "healthprobepolicies", "events", "pods"]);

type Replica = OperatorProcess & { identity: string; metricsPort: number };

let dir: string;
const procs: Replica[] = [];

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

async function startReplica(user: string): Promise<Replica> {
  const proc = startOperatorProcess({ server: bed.cluster.server, dir, user, flags: SHARD_FLAGS });
  const r = proc as Replica;
  procs.push(r);
  const { identity } = await proc.started(60_000);
  r.identity = identity;
  r.metricsPort = proc.logs.find((l) => l.msg === "operator started")!.metricsPort as number;
  return r;
}

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

/** Namespace → holder of its handover marker, read from the API. */
async function markerHolders(): Promise<Map<string, string>> {
  const leases = await bed.cluster.list(
    "coordination.k8s.io/v1",
    "Lease",
    "healthprobe-system",
    "healthprobe.io/shard-kind=marker",
  );
  return new Map(
    leases.map((l) => [
      l.metadata!.annotations!["healthprobe.io/shard-namespace"] as string,
      (l.spec?.holderIdentity as string) ?? "",
    ]),
  );
}

async function gauge(r: Replica, name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`)).text();
  const m = new RegExp(`^${name}\\{replica="${r.identity.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"\\} (\\d+)`, "m").exec(
    text,
  );
  return m ? Number(m[1]) : undefined;
}

async function statusOf(ns: string): Promise<Record<string, any> | undefined> {
  return (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web", ns))?.status;
}

function writesFor(ns: string): RequestLogEntry[] {
  return requestsBy(bed.cluster.server.requestLog, { writes: true }).filter(
    (e) => e.namespace === ns && WRITE_KINDS.has(e.resource) && e.user.startsWith("operator-"),
  );
}

/**
 * Per namespace, the writes in the order the server took them, as runs of one replica each: a run
 * may follow another replica's only if its replica won the namespace's marker in between (after
 * the other's last write, before its own first). Two replicas writing in overlapping terms would
 * interleave without such a marker write between their runs.
 */
function handoverViolations(): string[] {
  const problems: string[] = [];
  const log = bed.cluster.server.requestLog;
  for (const ns of NAMESPACES) {
    const writes = log.flatMap((e, i) =>
      e.namespace === ns && WRITE_KINDS.has(e.resource) && e.user.startsWith("operator-") && isWriteEntry(e)
        ? [{ user: e.user, i }]
        : [],
    );
    const markers = log.flatMap((e, i) =>
      e.resource === "leases" && e.name.includes(`-ns-${ns}-`) && isWriteEntry(e) && e.code < 400
        ? [{ user: e.user, i }]
        : [],
    );
    const runs: Array<{ user: string; first: number; last: number }> = [];
    for (const w of writes) {
      const run = runs.at(-1);
      if (run?.user === w.user) run.last = w.i;
      else runs.push({ user: w.user, first: w.i, last: w.i });
    }
    for (let k = 1; k < runs.length; k++) {
      const [prev, cur] = [runs[k - 1]!, runs[k]!];
      if (!markers.some((m) => m.user === cur.user && m.i > prev.last && m.i < cur.first))
        problems.push(
          `${ns}: ${cur.user} wrote (request ${cur.first}) after ${prev.user} (request ${prev.last}) without taking the marker in between`,
        );
    }
  }
  return problems;
}

const isWriteEntry = (e: RequestLogEntry) => ["create", "update", "patch", "delete"].includes(e.verb);

/** Every namespace's marker names a live replica, each status names that owner, and the gauges add up. */
async function settled(replicas: Replica[]): Promise<Map<string, string> | undefined> {
  const holders = await markerHolders();
  const ids = new Set(replicas.map((r) => r.identity));
  if (!NAMESPACES.every((ns) => ids.has(holders.get(ns) ?? ""))) return undefined;
  // Each policy's status names its owner (status.shard, the SHARD column of -o wide).
  for (const ns of NAMESPACES) if ((await statusOf(ns))?.shard !== holders.get(ns)) return undefined;
  for (const r of replicas) {
    const mine = NAMESPACES.filter((ns) => holders.get(ns) === r.identity).length;
    if ((await gauge(r, "healthprobe_shard_namespaces_owned")) !== mine) return undefined;
    if ((await gauge(r, "healthprobe_shard_targets_owned")) !== 2 * mine) return undefined;
  }
  return holders;
}

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

    // SIGKILL the replica with the most namespaces (no release, no retire: its lease must expire).
    const victim = [...replicas].sort(
      (x, y) =>
        NAMESPACES.filter((ns) => holders.get(ns) === y.identity).length -
        NAMESPACES.filter((ns) => holders.get(ns) === x.identity).length,
    )[0]!;
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
    expect([...(await markerHolders()).values()]).not.toContain(d.identity);
    await waitFor(() => settled(survivors), { timeoutMs: 30_000, what: "the others to own every namespace again" });

    expect(handoverViolations()).toEqual([]);
  }, 180_000);
});
